package runtime

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Step is one gate release of a round: the start or the finish of the
// round's call number Call (calls numbered in canonical order: op name,
// then arguments).
type Step struct {
	Call   int
	Finish bool
}

// String returns the step as a schedule writes it: s<i> or f<i>.
func (st Step) String() string {
	if st.Finish {
		return "f" + strconv.Itoa(st.Call)
	}
	return "s" + strconv.Itoa(st.Call)
}

// Schedule is a printable interleaving of an agent's parallel tool calls.
// A round is the set of calls that were waiting at their start gates
// together; Rounds holds, for each round of two or more calls, in order, the
// order in which the scheduler released their start (s) and finish (f)
// gates. Rounds of one call have one order and are not written.
//
// Its string form is the rounds joined by ".", each step as s<i> or f<i>:
// "s1s0f0f1.s0s1f1f0". Passing it back (testkit.Replay,
// AGENTIDEM_SCHEDULE) replays exactly that interleaving.
//
// An eager schedule is written with "eager." in front:
// "eager.s0s1f1f0".
type Schedule struct {
	Rounds [][]Step
	// Eager says that a call that becomes ready while a round is played
	// (a pool's worker freed by a finish, a branch's next call) plays
	// at once, a round of its own, before the round's next release,
	// instead of waiting for the round's end: it is then in flight with
	// the calls of the round still held at their finish gates, as it
	// may be in production. Its rounds are numbered in the order they
	// are played, the newcomers' among them.
	Eager bool
}

// eagerPrefix is what the printable form of an eager schedule starts with.
const eagerPrefix = "eager."

// String returns the printable form; the empty schedule is "serial".
func (s Schedule) String() string {
	prefix := ""
	if s.Eager {
		prefix = eagerPrefix
	}
	if len(s.Rounds) == 0 {
		return prefix + "serial"
	}
	var b strings.Builder
	b.WriteString(prefix)
	for i, r := range s.Rounds {
		if i > 0 {
			b.WriteByte('.')
		}
		for _, st := range r {
			b.WriteString(st.String())
		}
	}
	return b.String()
}

// ParseSchedule reads the form String writes.
func ParseSchedule(str string) (Schedule, error) {
	var s Schedule
	str = strings.TrimSpace(str)
	rest, eager := strings.CutPrefix(str, eagerPrefix)
	s.Eager = eager
	if rest == "" && !eager || rest == "serial" {
		return s, nil
	}
	for ri, part := range strings.Split(rest, ".") {
		var round []Step
		starts, finishes := map[int]bool{}, map[int]bool{}
		for i := 0; i < len(part); {
			kind := part[i]
			if kind != 's' && kind != 'f' {
				return Schedule{}, fmt.Errorf("schedule %q: round %d: want s<n> or f<n> at %q", str, ri+1, part[i:])
			}
			j := i + 1
			for j < len(part) && part[j] >= '0' && part[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(part[i+1 : j])
			if err != nil {
				return Schedule{}, fmt.Errorf("schedule %q: round %d: want a call number after %c", str, ri+1, kind)
			}
			st := Step{Call: n, Finish: kind == 'f'}
			if st.Finish {
				if !starts[n] || finishes[n] {
					return Schedule{}, fmt.Errorf("schedule %q: round %d: f%d must follow s%d once", str, ri+1, n, n)
				}
				finishes[n] = true
			} else {
				if starts[n] {
					return Schedule{}, fmt.Errorf("schedule %q: round %d: s%d twice", str, ri+1, n)
				}
				starts[n] = true
			}
			round = append(round, st)
			i = j
		}
		if len(starts) != len(finishes) || len(starts) < 2 {
			return Schedule{}, fmt.Errorf("schedule %q: round %d: every call needs s and f, and a round has two calls or more", str, ri+1)
		}
		for n := range starts {
			if n >= len(starts) {
				return Schedule{}, fmt.Errorf("schedule %q: round %d: calls are numbered 0..%d", str, ri+1, len(starts)-1)
			}
		}
		s.Rounds = append(s.Rounds, round)
	}
	return s, nil
}

// maxExhaustive is the largest class of mutually dependent calls whose
// interleavings are enumerated: 4 calls, 8 gates, 2520 orders.
const maxExhaustive = 4

var interleavingCache = struct {
	sync.Mutex
	m map[int][][]Step
}{m: map[int][][]Step{}}

// interleavings lists every order of the 2m gates of m calls in which each
// call starts before it finishes, lexicographically: the first is all
// starts then all finishes in call order (the listed order).
func interleavings(m int) [][]Step {
	interleavingCache.Lock()
	defer interleavingCache.Unlock()
	if out, ok := interleavingCache.m[m]; ok {
		return out
	}
	var out [][]Step
	started := make([]bool, m)
	finished := make([]bool, m)
	cur := make([]Step, 0, 2*m)
	var rec func()
	rec = func() {
		if len(cur) == 2*m {
			out = append(out, append([]Step(nil), cur...))
			return
		}
		for i := 0; i < m; i++ {
			if !started[i] {
				started[i] = true
				cur = append(cur, Step{Call: i})
				rec()
				cur = cur[:len(cur)-1]
				started[i] = false
			}
		}
		for i := 0; i < m; i++ {
			if started[i] && !finished[i] {
				finished[i] = true
				cur = append(cur, Step{Call: i, Finish: true})
				rec()
				cur = cur[:len(cur)-1]
				finished[i] = false
			}
		}
	}
	rec()
	interleavingCache.m[m] = out
	return out
}

// countCap caps the counts of orders and schedules: past it, "more than a
// trillion" (legend.go) says enough. Where int has 32 bits, it is the
// largest int.
const countCap = min(1<<40, math.MaxInt)

// countInterleavings is (2m)!/2^m without building the list, capped at
// countCap.
func countInterleavings(m int) int {
	n := 1
	for i := 1; i <= 2*m; i++ {
		if n > math.MaxInt/i {
			return countCap
		}
		n *= i
		if i%2 == 0 {
			n /= 2
		}
		if n > countCap {
			return countCap
		}
	}
	return n
}

// roundShape is what the scheduler saw of a round: its calls in canonical
// order and the classes of calls that do not commute.
type roundShape struct {
	labels  []string
	classes [][]int // indices into labels; each class sorted, classes by first member
	// afterMet says two calls of the round commute only because the one
	// whose op declares after= the other's had its own prerequisite met
	// before the round (afterMet): the reverse order reverses every
	// start of such a round (reversed).
	afterMet bool
}

// space is the number of distinct interleavings of the round after
// reduction: the product over classes.
func (r roundShape) space() int {
	n := 1
	for _, c := range r.classes {
		n = capMul(n, countInterleavings(len(c)))
	}
	return n
}

// exhaustive reports whether every class is small enough to enumerate.
func (r roundShape) exhaustive() bool {
	for _, c := range r.classes {
		if len(c) > maxExhaustive {
			return false
		}
	}
	return true
}

// order returns interleaving number idx of the round (mixed radix over the
// classes). Calls of different classes commute, so only each class's own
// order varies; the classes are merged step by step (round robin), which
// keeps calls of different classes in flight together as the agent
// dispatched them.
//
// A class too large to enumerate (exhaustive) has one order here, its
// listed one, built without listing the others: a class of 6 calls has
// 7.5 million, of 10 more than 10^15, and listing them took every byte of
// memory (two deliveries of an agent with five parallel writes, one round
// of ten calls under the listed schedule).
func (r roundShape) order(idx int) []Step {
	seqs := make([][]Step, len(r.classes))
	for i, c := range r.classes {
		if len(c) > maxExhaustive {
			seqs[i] = listedSteps(c)
			continue
		}
		list := interleavings(len(c))
		k := idx % len(list)
		idx /= len(list)
		for _, st := range list[k] {
			seqs[i] = append(seqs[i], Step{Call: c[st.Call], Finish: st.Finish})
		}
	}
	return merge(seqs)
}

// listedSteps is the first of interleavings(len(calls)), on calls: every
// start in order, then every finish in order.
func listedSteps(calls []int) []Step {
	steps := make([]Step, 0, 2*len(calls))
	for _, c := range calls {
		steps = append(steps, Step{Call: c})
	}
	for _, c := range calls {
		steps = append(steps, Step{Call: c, Finish: true})
	}
	return steps
}

// merge interleaves sequences round robin, keeping each one's order.
func merge(seqs [][]Step) []Step {
	var out []Step
	for pos := 0; ; pos++ {
		any := false
		for _, s := range seqs {
			if pos < len(s) {
				out = append(out, s[pos])
				any = true
			}
		}
		if !any {
			return out
		}
	}
}

// reversed is the listed order backwards: starts in reverse call order, then
// finishes in reverse, class by class, and the finishes of different
// classes in reverse class order too. Calls of different classes commute:
// which effect lands first is no matter, and their starts keep the class
// order (a sink that numbers what they create numbers it as listed). But
// the agent sees their answers in the order they finish, and one that
// acts on the first answer to come back (the invoice it calls its
// primary one) acts otherwise when they finish the other way round: with
// the classes' finishes merged in class order here as well, no schedule
// ran them so, and such an agent passed.
//
// Where two calls commute only because one's after= prerequisite was met
// before the round (afterMet), every start is reversed, across classes
// too, and every finish: the pair's tool bodies run the other way round
// once. An attach whose tool reads what the create beside it changes (the
// latest invoice, where it should take its own) ends otherwise there; with
// the pair commuting, no schedule ran the create's body first, and such an
// agent passed (red team rY).
func (r roundShape) reversed() []Step {
	if r.afterMet {
		out := make([]Step, 0, 2*len(r.labels))
		for i := len(r.labels) - 1; i >= 0; i-- {
			out = append(out, Step{Call: i})
		}
		for i := len(r.labels) - 1; i >= 0; i-- {
			out = append(out, Step{Call: i, Finish: true})
		}
		return out
	}
	seqs := make([][]Step, len(r.classes))
	for k, c := range r.classes {
		for i := len(c) - 1; i >= 0; i-- {
			seqs[k] = append(seqs[k], Step{Call: c[i]})
		}
		for i := len(c) - 1; i >= 0; i-- {
			seqs[k] = append(seqs[k], Step{Call: c[i], Finish: true})
		}
	}
	return mergeFinishesReversed(seqs)
}

// mergeFinishesReversed interleaves sequences round robin, keeping each
// one's order, as merge does, but at each position the finishes of the
// sequences come after the starts, last sequence first.
func mergeFinishesReversed(seqs [][]Step) []Step {
	var out []Step
	for pos := 0; ; pos++ {
		any := false
		for _, s := range seqs {
			if pos < len(s) && !s[pos].Finish {
				out = append(out, s[pos])
				any = true
			}
		}
		for i := len(seqs) - 1; i >= 0; i-- {
			if s := seqs[i]; pos < len(s) && s[pos].Finish {
				out = append(out, s[pos])
				any = true
			}
		}
		if !any {
			return out
		}
	}
}

// pct draws one order of the round by probabilistic concurrency testing:
// random distinct priorities per call, the enabled gate of the
// highest-priority call goes next, and at depth-1 random steps the running
// call's priority drops below all others.
func (r roundShape) pct(rng *rand.Rand, depth int) []Step {
	n := len(r.labels)
	prio := rng.Perm(n)
	steps := 2 * n
	change := map[int]bool{}
	for i := 0; i < depth-1 && i < steps; i++ {
		change[rng.IntN(steps)] = true
	}
	low := -1
	started := make([]bool, n)
	finished := make([]bool, n)
	var out []Step
	for len(out) < steps {
		best, bestFinish := -1, false
		for i := 0; i < n; i++ {
			enabled := !started[i] || !finished[i]
			if !enabled {
				continue
			}
			if best < 0 || prio[i] > prio[best] {
				best, bestFinish = i, started[i]
			}
		}
		if change[len(out)] {
			prio[best] = low
			low--
		}
		if bestFinish {
			finished[best] = true
		} else {
			started[best] = true
		}
		out = append(out, Step{Call: best, Finish: bestFinish})
	}
	return out
}

// shapeOf groups a round's calls into classes: calls commute unless they
// touch one entity, one declares the other's op in after= (and had that
// prerequisite met before the round: afterMet), or one of them has no
// entity (it may touch anything).
func shapeOf(calls []*Call) roundShape { return shapeWith(calls, nil, nil) }

// shapeWith is shapeOf where the ops in outer (ops the baseline saw make
// calls inside their own) depend on every call: their entity says what
// they touch themselves, not what the calls made inside them touch. met
// are the calls that had answered before the round that meet an after= of
// one of its calls (prerequisitesMet).
func shapeWith(calls []*Call, outer map[string]bool, met []*Call) roundShape {
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].schedLabel() < calls[j].schedLabel() })
	n := len(calls)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	cleared := false
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if outer[calls[i].op.Name] || outer[calls[j].op.Name] || dependent(calls[i], calls[j], met) {
				parent[find(i)] = find(j)
			} else if met != nil && dependent(calls[i], calls[j], nil) {
				cleared = true
			}
		}
	}
	byRoot := map[int][]int{}
	var roots []int
	for i := 0; i < n; i++ {
		r := find(i)
		if _, ok := byRoot[r]; !ok {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], i)
	}
	shape := roundShape{afterMet: cleared}
	for _, c := range calls {
		shape.labels = append(shape.labels, c.schedLabel())
	}
	for _, r := range roots {
		shape.classes = append(shape.classes, byRoot[r])
	}
	sort.Slice(shape.classes, func(i, j int) bool { return shape.classes[i][0] < shape.classes[j][0] })
	return shape
}

func dependent(a, b *Call, met []*Call) bool {
	if a.rec.Entity == "" || b.rec.Entity == "" || a.rec.Entity == b.rec.Entity {
		return true
	}
	return slices.Contains(a.op.After, b.op.Name) && !afterMet(b, a, met) ||
		slices.Contains(b.op.After, a.op.Name) && !afterMet(a, b, met)
}

// afterMet reports whether b, a call of an op that declares after=a's op,
// with a beside it in its round on another entity, had its own
// prerequisite met before the round was played: a call of a's op among met
// answered, on b's entity, or with an answer that names it (as
// prerequisiteDone clears the finding). a is then not what b waits for,
// and the two commute as calls on other entities do. A channel pipeline
// whose stage 2 attaches each invoice stage 1 created and sent, while
// stage 1 creates the next, played every order of each such pair: a
// correct five-order pipeline took 1,297 schedules and 83 s a suite (red
// team rS #4). Not where a is on the entity of the call that named b's
// (a retry of that create): it may be the one b waits for again.
func afterMet(a, b *Call, met []*Call) bool {
	want, linkable := entityText(b.rec.Entity)
	for _, c := range met {
		if c.op.Name != a.op.Name || c.rec.Entity == a.rec.Entity {
			continue
		}
		if c.rec.Entity == b.rec.Entity || linkable && resultNames(c.rec.Result, want) {
			return true
		}
	}
	return false
}

// prerequisitesMet returns the calls of run r that had answered (ended,
// succeeded, answer received) when a round of calls is played that meet an
// after= of one of them on an entity: nil where no call of the round
// declares after= of another's op, as most do not.
func prerequisitesMet(r *recorder, calls []*Call) []*Call {
	if r == nil || len(calls) < 2 {
		return nil
	}
	var want []string
	for _, b := range calls {
		for _, a := range calls {
			if a != b && slices.Contains(b.op.After, a.op.Name) && !slices.Contains(want, a.op.Name) {
				want = append(want, a.op.Name)
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	var out []*Call
	for _, c := range r.allCalls() {
		if !slices.Contains(want, c.op.Name) || slices.Contains(calls, c) {
			continue
		}
		c.mu.Lock()
		ok := c.rec.ended && c.rec.status == statusSuccess && c.rec.observation == observationReceived
		c.mu.Unlock()
		if ok {
			out = append(out, c)
		}
	}
	return out
}
