package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Scenario kinds of the scheduler.
const (
	ScenarioInterleaving = "interleaving"
	ScenarioPartialBatch = "partial_batch_failure"
)

// DefaultSchedules is the default budget of schedules per test: enough to
// explore every order of a batch of four dependent calls (2520).
const DefaultSchedules = 3000

// DefaultDepth is the default PCT depth (bug depth d; d-1 priority change
// points per round).
const DefaultDepth = 3

// Bubble runs fn in an isolated bubble whose quiescence function quiesce
// returns once every other goroutine of the bubble is durably blocked.
// testkit provides one built on testing/synctest (testkit.VirtualTime);
// without one, schedules run on real time and quiescence is read off the
// goroutines of the process (see goroutines.go). A bubble is used only when
// the baseline, run on real time, showed no network I/O and no goroutine
// that outlived it.
type Bubble func(fn func(quiesce func()))

// WithBubble makes interleaving scenarios run inside b (testkit sets it).
func WithBubble(b Bubble) Option { return optionFunc(func(c *config) { c.bubble = b }) }

// Schedules sets the budget of schedules explored per test (default
// DefaultSchedules). Rounds of up to four mutually dependent calls are
// explored exhaustively while the budget lasts; larger spaces are sampled
// by seeded PCT after the listed order and its reverse.
func Schedules(n int) Option { return optionFunc(func(c *config) { c.budget = n }) }

// Depth sets the PCT depth d: d-1 priority change points per round.
func Depth(d int) Option { return optionFunc(func(c *config) { c.depth = d }) }

// Seed pins the PCT sampler. AGENTIDEM_SEED does the same, where the option
// is not given (a value that is not a whole number is a *ConfigError, and
// the suite does not run); without either the seed is 1, so runs are
// reproducible by default. The replay line of a schedule from a run seeded
// by AGENTIDEM_SEED sets it first ("AGENTIDEM_SEED=2 go test -run ..."),
// since the seed decides which schedules the sample holds.
func Seed(s int64) Option { return optionFunc(func(c *config) { c.seed = s; c.seedSet = true }) }

// Replay runs exactly one schedule, as printed by a finding.
// AGENTIDEM_SCHEDULE does the same, where the option is not given; a value
// that does not parse as a schedule is a *ConfigError, and the suite does
// not run.
func Replay(schedule string) Option {
	return optionFunc(func(c *config) { c.replaySchedule = schedule })
}

// Outcome sets the function that captures the outcome of a run (the
// agent's answer and the world's end state) after each schedule; outcomes
// that differ between schedules are an order_variant_outcome finding. Its
// value is compared by canonical JSON, so it must be the same for the same
// order: leave out random ids and wall-clock times (inside a bubble, time
// is virtual and repeats).
func Outcome(fn func() any) Option { return optionFunc(func(c *config) { c.outcome = fn }) }

func (c *config) defaults() {
	if c.budget <= 0 {
		c.budget = DefaultSchedules
	}
	if c.depth <= 0 {
		c.depth = DefaultDepth
	}
	if !c.seedSet {
		c.seed = 1 // AGENTIDEM_SEED, where given, was read with the options (readEnv)
	}
	c.shardDefaults()
}

// Exploration summarizes what the scheduler explored.
type Exploration struct {
	// Rounds is the number of rounds of two or more calls in the listed
	// schedule; Space the number of distinct schedules after reduction
	// (calls on different entities commute), Unreduced the number
	// without it.
	Rounds    int `json:"rounds"`
	Space     int `json:"space"`
	Unreduced int `json:"unreduced"`
	// Explored is how many schedules ran; Exhaustive whether every order
	// of the exploration ran, each as chosen (a schedule whose rounds were
	// not the ones its order was chosen from, run followTries times,
	// stops the exploration with a Hazard). The orders that ran may be
	// more or fewer than Space, which counts the listed schedule's rounds,
	// when the rounds after the first change with the order of the calls
	// before them.
	Explored   int    `json:"explored"`
	Exhaustive bool   `json:"exhaustive"`
	Strategy   string `json:"strategy"` // "exhaustive", "pct" or "replay"
	// Hazard says why scheduling stopped, if it did.
	Hazard string `json:"hazard,omitempty"`
	// beside counts the schedules of an exhaustive exploration that are
	// no order of its space: the reverse of the listed order, when it
	// reverses calls that commute too (roundShape.reversed).
	beside int
	// eager counts the eager twins that ran (Schedule.Eager): the
	// schedules in which a call that became ready while a round was
	// played started before the round's next release.
	eager int
	// Shard says which part of a sharded exploration ran (shard.go);
	// Explored then counts this shard's schedules.
	Shard *Shard `json:"shard,omitempty"`
}

func interleavingScenario(name string) Scenario {
	return Scenario{Name: ScenarioInterleaving + "/" + name, Kind: ScenarioInterleaving, OperationIndex: -1, Deliveries: 1}
}

// Parallel reports whether the agent ever has two calls in flight together
// (or the scheduler could not tell, because of a hazard): whether
// Interleavings has anything to explore. It runs the pre-flight once.
func (s *Suite) Parallel(ctx context.Context) bool {
	if !s.BaselineOK() || s.selectErr != nil {
		return false
	}
	s.cfg.defaults()
	if s.cfg.replaySchedule != "" {
		return true
	}
	_, sch, err := s.preflight(ctx)
	return err != nil || sch.hazard != "" || len(sch.shapes) > 0
}

// preflight is the baseline's run under the listed schedule, on real time.
func (s *Suite) preflight(context.Context) (*Result, *scheduler, error) {
	return s.pre.res, s.pre.sch, s.pre.err
}

type preflightRun struct {
	res *Result
	sch *scheduler
	err error
}

// Interleavings explores the schedules of the agent's parallel tool calls
// and calls each with the result of every schedule run, in order. An agent
// that never has two calls in flight gets no schedule. The first schedule is
// the listed order (calls in canonical order, all started before any
// finishes), the second its reverse.
func (s *Suite) Interleavings(ctx context.Context, each func(*Result)) (*Exploration, error) {
	s.cfg.defaults()
	ex := &Exploration{}
	defer s.commutingWrites()
	if !s.BaselineOK() || s.selectErr != nil {
		return ex, nil
	}
	if s.cfg.replaySchedule != "" {
		sched, err := ParseSchedule(s.cfg.replaySchedule)
		if err != nil {
			return ex, err
		}
		ex.Strategy = "replay"
		res, sch, err := s.scheduled(ctx, fixedChooser(sched), s.bubble(), sched.Eager)
		ex.Explored = 1
		msg := replayMismatch(sched, sch.shapes)
		if msg == "" && sched.Eager && sch.eagerPlays == 0 {
			msg = fmt.Sprintf("schedule %s does not fit this agent: it is eager, but no call became ready while a round was played, so it ran as %s; the agent changed since the schedule was printed: run without AGENTIDEM_SCHEDULE (or testkit.Replay) to explore its schedules again", sched, Schedule{Rounds: sched.Rounds})
		}
		if err == nil && msg != "" {
			err = fmt.Errorf("%s", msg)
			res.Error = strings.TrimPrefix(res.Error+"; "+msg, "; ")
			res.Inconclusive, res.Safe = true, false
		}
		s.record(res, each)
		return ex, err
	}

	pre, preSched, err := s.preflight(ctx)
	if err != nil || preSched.hazard != "" {
		ex.Hazard = preSched.hazard
		pre.Inconclusive = true
		pre.Safe = false
		s.record(pre, each)
		if err == nil {
			err = fmt.Errorf("%s", preSched.hazard)
		}
		return ex, err
	}
	if len(preSched.shapes) == 0 {
		return ex, nil // no two calls ever in flight together
	}
	var exhaustive bool
	ex.Rounds, ex.Space, ex.Unreduced, exhaustive = spaceOf(preSched.shapes, s.cfg.budget)
	ex.Exhaustive = exhaustive
	if s.cfg.shardErr != nil {
		return ex, s.cfg.shardErr
	}
	if s.cfg.sharded() {
		errs := s.exploreShard(ctx, ex, preSched.shapes, exhaustive, each)
		s.outcomes()
		s.explainOrderAcross()
		return ex, errors.Join(errs...)
	}

	seen := map[string]bool{}
	// run runs one schedule until the rounds it can compare with ref's
	// (the first upto, whose shapes the order was chosen from: followed)
	// are ref's, followTries times at most, and records the last run. One
	// that never followed is recorded inconclusive, and stops the
	// exploration (stop): the orders it was to run were not run.
	// With grown set, a run whose rounds only hold more calls than ref's
	// is taken at once: ref (the pre-flight) missed them.
	stop := false
	classic := 0 // the schedules seen that are not eager twins: the budget's
	// known holds the error findings (orderKey) of the schedules
	// recorded; onlyKnown counts the schedules recorded since the last
	// that made one not known before. Once repeatStop schedules in a row
	// have made none, while some schedule failed, the exploration stops
	// (repeatsOnly).
	known := map[string]bool{}
	onlyKnown := 0
	run := func(choose chooser, ref *scheduler, upto int, grown, eager bool) (*scheduler, error) {
		var (
			res    *Result
			sch    *scheduler
			err    error
			missed []string
		)
		for try := 0; try < followTries; try++ {
			res, sch, err = s.scheduled(ctx, choose, s.bubble(), eager)
			why, grew := followed(ref, sch, upto)
			if grew && grown && err == nil && res.Trace != nil {
				res.Trace.Notes = append(res.Trace.Notes, "interleaving: the pre-flight run of the listed schedule missed calls that this run of it had: "+why+"; the orders explored are this run's rounds'")
			}
			if why == "" || grew && grown || err != nil {
				break
			}
			missed = append(missed, why)
		}
		if len(missed) > 0 && res.Trace != nil {
			res.Trace.Notes = append(res.Trace.Notes, fmt.Sprintf("interleaving: this schedule ran %d times: %s", len(missed)+1, strings.Join(missed, "; ")))
		}
		if eager && len(missed) == followTries && err == nil {
			// An eager twin whose rounds before its first newcomer were
			// not its schedule's: no order chosen after it depends on it,
			// and what it ran is a schedule of its own, recorded as it
			// ran (its string replays it), when a newcomer played.
			missed = nil
		}
		if len(missed) == followTries && err == nil {
			stop = true
			ex.Hazard = unfollowedHazard(res.Schedule, missed[len(missed)-1], sch.realtime)
			res.Error = strings.TrimPrefix(res.Error+"; "+ex.Hazard, "; ")
			res.Inconclusive, res.Safe = true, false
		}
		if eager && sch.eagerPlays == 0 && err == nil && !res.Inconclusive {
			return sch, err // no call became ready mid-round: the schedule it twins, again
		}
		if seen[res.Scenario] {
			return sch, err // the reverse is often one of the orders: counted once
		}
		seen[res.Scenario] = true
		if eager {
			ex.eager++
		} else {
			classic++
		}
		ex.Explored = len(seen)
		s.record(res, each)
		if repeatsOnly(res, known, &onlyKnown) && !stop {
			stop = true
			ex.Hazard = repeatsHazard(known)
		}
		return sch, err
	}
	// twin runs the eager twin (Schedule.Eager, eagerChooser) of a
	// schedule that ran and saw a call become ready mid-round, once per
	// schedule, right after it, as a shard does (exploreShard). An error
	// (a stall) stops the exploration, as one of the schedule's would.
	twinned := map[string]bool{}
	var errs []error
	twin := func(ref *scheduler) {
		if ref == nil || !ref.sawReady || stop || twinned[ref.schedule.String()] {
			return
		}
		twinned[ref.schedule.String()] = true
		if _, err := run(eagerChooser(ref), ref, ref.readyAt, false, true); err != nil {
			errs = append(errs, err)
			stop = true
		}
	}
	// The listed schedule's first run is compared with the pre-flight's,
	// on real time: in a bubble the pre-flight (on real time) may see
	// other rounds, and the bubble's, exact, are the ones explored.
	var listed *scheduler
	if s.bubble() == nil {
		listed = preSched
	}
	first, err := run(prefixChooser(nil), listed, len(preSched.shapes), true, false)
	if err != nil {
		errs = append(errs, err)
	} else {
		twin(first)
	}
	if len(first.shapes) > 0 && !slices.EqualFunc(first.shapes, preSched.shapes, func(a, b roundShape) bool { return slices.Equal(a.labels, b.labels) }) {
		// The space is the rounds the exploration takes its orders
		// from: the first run's, not the pre-flight's (which, on real
		// time, can miss a call: followed).
		ex.Rounds, ex.Space, ex.Unreduced, exhaustive = spaceOf(first.shapes, s.cfg.budget)
	}
	reverse := ""
	if classic < s.cfg.budget && !stop {
		sch, err := run(reverseChooser(), first, 1, false, false)
		if err != nil {
			errs = append(errs, err)
		} else {
			twin(sch)
		}
		reverse = sch.schedule.String()
	}
	done := false // every order of the exploration ran
	if exhaustive {
		ex.Strategy = "exhaustive"
		orders := map[string]bool{first.schedule.String(): true}
		choices, ref := next(nil, first.shapes), first
		for choices != nil && classic < s.cfg.budget && !stop {
			sch, err := run(prefixChooser(choices), ref, len(choices), false, false)
			if err != nil {
				errs = append(errs, err)
				break
			}
			twin(sch)
			orders[sch.schedule.String()] = true
			choices, ref = next(choices, sch.shapes), sch
		}
		switch {
		case choices == nil && !stop && len(errs) == 0:
			done = true
			if reverse != "" && !orders[reverse] {
				// The reverse reverses calls that commute too: no
				// order of the space (roundShape.reversed).
				ex.beside = 1
			}
		case ex.Hazard == "" && len(errs) == 0:
			ex.Hazard = fmt.Sprintf("the budget of %s ran out before the last order (testkit.Schedules raises it)", countNoun(s.cfg.budget, "schedule"))
		}
	} else {
		ex.Strategy = "pct"
		rng := rand.New(rand.NewPCG(uint64(s.cfg.seed), 0x61676e74))
		for tries := 0; classic < s.cfg.budget && tries < 4*s.cfg.budget && !stop; tries++ {
			sch, err := run(pctChooser(rng, s.cfg.depth), first, 1, false, false)
			if err != nil {
				errs = append(errs, err)
				break
			}
			twin(sch)
		}
	}
	// Every order of the space, each run as chosen: the legend says "Ran
	// every order" only then. It said so after an exploration that ended
	// on a schedule whose round had missed a call (next took the smaller
	// round's orders for all there were: 14 of 90 orders run, red team
	// rtK), and after one a stall or the budget had cut short.
	ex.Exhaustive = exhaustive && done
	s.outcomes()
	s.explainOrderAcross()
	if len(errs) > 0 {
		return ex, errs[0]
	}
	return ex, nil
}

// repeatStop is how many schedules in a row that made no error finding
// not made before stop an exploration where some schedule failed
// (repeatsOnly).
const repeatStop = 100

// repeatsOnly notes the error findings of res, a schedule just recorded,
// in known (by orderKey), and counts in onlyKnown the schedules in a row
// that made none not known before. It reports whether the exploration
// should stop: some schedule failed, and the last repeatStop schedules
// only made its findings again, or none. An errgroup fan-out whose
// summary ran inside the group failed each of its 5,042 schedules with
// the same dependent_calls_concurrent, printing a failing subtest for
// each, in 44 to 57 s and some 450 MB for one suite, where its fix took
// 1.6 s (red team rS #4). The test fails on the first; the orders left
// are explored once the findings are fixed, and the line under
// interleaving says so. Sharded explorations run every order of their
// share (exploreShard): their union is the whole exploration's.
func repeatsOnly(res *Result, known map[string]bool, onlyKnown *int) bool {
	fresh := false
	for _, f := range res.Findings {
		if f.Severity != SeverityError {
			continue
		}
		if k := orderKey(f); !known[k] {
			known[k] = true
			fresh = true
		}
	}
	if fresh || len(known) == 0 {
		*onlyKnown = 0
		return false
	}
	*onlyKnown++
	return *onlyKnown >= repeatStop
}

// repeatsHazard is the exploration's Hazard when it stopped on schedules
// that only repeated failures (repeatsOnly).
func repeatsHazard(known map[string]bool) string {
	return fmt.Sprintf("the last %d schedules made no finding that earlier ones had not made (%s in all), and the orders left were not run; fix them and run the test again to explore those", repeatStop, countNoun(len(known), "distinct finding"))
}

// followTries is how many times a schedule runs, at most, while its rounds
// are not the ones its order was chosen from (followed). On real time a
// call can reach its start gate after its round was played: a worker of
// a dispatcher started before the scenario (at package init) is not
// watched, and in a process of thousands of goroutines it ran late 3 times
// in 20 explorations of 90 orders (red team rtK, rtk/poolpar), each time
// in one schedule only; run again, the schedule has its whole round.
const followTries = 3

// followed compares the first upto rounds of run with ref's, which the
// order run followed was chosen from: those rounds followed the same
// orders in both (a round's calls depend only on the orders of the rounds
// before it), so they hold the same calls (op and delivery: arguments may
// hold random ids). It returns what differs in the first round that does,
// "" when none does or there is no ref, and grew when that round only held
// more calls than ref's (ref missed them). The next order is taken from the rounds a run saw
// (next): after a run whose round missed a call, it was taken from a
// round of two calls for one of three, whose 6 orders were all run, and
// the exploration ended there with 14 of its 90 orders run, saying "Ran
// every order" (red team rtK).
func followed(ref, run *scheduler, upto int) (why string, grew bool) {
	if ref == nil {
		return "", false
	}
	for r := 0; r < min(upto, len(ref.rounds)); r++ {
		want := roundOps(ref.rounds[r])
		var got []string
		if r < len(run.rounds) {
			got = roundOps(run.rounds[r])
		}
		if slices.Equal(want, got) {
			continue
		}
		missing, extra := opsMinus(want, got), opsMinus(got, want)
		what := fmt.Sprintf("round %d held %s (%s) where the round its order was chosen from held %d (%s)",
			r+1, countNoun(len(got), "call"), strings.Join(got, ", "), len(want), strings.Join(want, ", "))
		if len(got) < 2 {
			what = fmt.Sprintf("round %d was not played as a round (%s at its start gates together) where the round its order was chosen from held %d calls (%s)",
				r+1, countNoun(len(got), "call"), len(want), strings.Join(want, ", "))
		}
		if len(missing) > 0 {
			what += fmt.Sprintf(": %s had not reached its start gate when the round was played", strings.Join(missing, ", "))
		}
		if len(extra) > 0 {
			what += fmt.Sprintf(": %s, not in the round then, was in it now", strings.Join(extra, ", "))
		}
		return what, len(missing) == 0
	}
	return "", false
}

// roundOps names a round's calls by op, with the delivery in front when it
// is not the first ("2:op"), sorted.
func roundOps(calls []*Call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.op.Name
		if c.inv != nil && c.inv.n > 1 {
			out[i] = strconv.Itoa(c.inv.n) + ":" + c.op.Name
		}
	}
	slices.Sort(out)
	return out
}

// opsMinus is a without b, as multisets of sorted names.
func opsMinus(a, b []string) []string {
	var out []string
	for i, j := 0, 0; i < len(a); i++ {
		for j < len(b) && b[j] < a[i] {
			j++
		}
		if j < len(b) && b[j] == a[i] {
			j++
			continue
		}
		out = append(out, a[i])
	}
	return out
}

// unfollowedHazard is why an exploration stopped at schedule sched, which
// never held the rounds its order was chosen from (why, of its last run).
func unfollowedHazard(sched, why string, realtime bool) string {
	h := fmt.Sprintf("schedule %s could not be run as chosen: in %d runs of it, its rounds were not the ones its order was chosen from (in the last, %s), so the orders after it were not run and not every order ran", sched, followTries, why)
	if realtime {
		return h + "; on real time the goroutines older than the scenario are not watched: a dispatcher, a worker pool or a transport started before it (at package init, by Setup or by the test) that carries the agent's calls must say when a call is on its way to it, with runtime.Sending (README: Real agents: real time, stalls), or be started by Setup for each scenario"
	}
	return h + "; in a bubble that means the agent's parallel calls depend on more than the order of the calls before them (a random choice, a value read from outside the run)"
}

// spaceOf counts the rounds of shapes and their orders, with and without
// reduction, and says whether the budget holds every one of them.
func spaceOf(shapes []roundShape, budget int) (rounds, space, unreduced int, exhaustive bool) {
	space, unreduced, exhaustive = 1, 1, true
	for _, sh := range shapes {
		space = capMul(space, sh.space())
		unreduced = capMul(unreduced, countInterleavings(len(sh.labels)))
		exhaustive = exhaustive && sh.exhaustive()
	}
	return len(shapes), space, unreduced, exhaustive && space <= budget
}

// capMul is a*b for counts (not negative), capped at countCap.
func capMul(a, b int) int {
	if a > countCap/max(b, 1) {
		return countCap
	}
	return min(a*b, countCap)
}

// next is the choice vector after choices in depth-first order, given the
// shapes of the rounds the last run saw, or nil when all are done.
func next(choices []int, shapes []roundShape) []int {
	for r := len(shapes) - 1; r >= 0; r-- {
		c := 0
		if r < len(choices) {
			c = choices[r]
		}
		if c+1 < shapes[r].space() {
			out := make([]int, r+1)
			copy(out, choices)
			out[r] = c + 1
			return out
		}
	}
	return nil
}

type chooser = func(round int, shape roundShape) ([]Step, error)

func prefixChooser(choices []int) chooser {
	return func(round int, shape roundShape) ([]Step, error) {
		idx := 0
		if round < len(choices) {
			idx = choices[round]
		}
		if !shape.exhaustive() {
			if idx == 0 {
				return shape.order(0), nil
			}
			return nil, fmt.Errorf("round %d is too large to enumerate", round+1)
		}
		return shape.order(idx), nil
	}
}

// serialChooser is the listed order with each call's finish right after
// its start: every call of a round runs alone (serialWindows).
func serialChooser() chooser {
	return func(_ int, shape roundShape) ([]Step, error) {
		listed := shape.order(0)
		out := make([]Step, 0, len(listed))
		for _, st := range listed {
			if !st.Finish {
				out = append(out, st, Step{Call: st.Call, Finish: true})
			}
		}
		return out, nil
	}
}

func reverseChooser() chooser {
	return func(_ int, shape roundShape) ([]Step, error) { return shape.reversed(), nil }
}

func pctChooser(rng *rand.Rand, depth int) chooser {
	return func(_ int, shape roundShape) ([]Step, error) { return shape.pct(rng, depth), nil }
}

// eagerChooser is the chooser of the eager twin of the schedule ref ran:
// each round that is one of ref's (the same calls at the same place) in
// ref's order, any other (newcomers that now play as a round of their own,
// rounds after them that changed) in its listed order. It depends only on
// ref's run, so a shard that ran ref runs the same twin as one unsharded
// exploration (exploreShard).
func eagerChooser(ref *scheduler) chooser {
	return func(round int, shape roundShape) ([]Step, error) {
		if round < len(ref.shapes) && round < len(ref.schedule.Rounds) && slices.Equal(ref.shapes[round].labels, shape.labels) {
			return ref.schedule.Rounds[round], nil
		}
		return shape.order(0), nil
	}
}

func fixedChooser(sched Schedule) chooser {
	return func(round int, shape roundShape) ([]Step, error) {
		if round >= len(sched.Rounds) {
			return nil, fmt.Errorf("schedule %s does not fit this agent: it has %s, but the agent made round %d of %d parallel calls: the agent changed since the schedule was printed: run without AGENTIDEM_SCHEDULE (or testkit.Replay) to explore its schedules again", sched, scheduleShape(sched), round+1, len(shape.labels))
		}
		order := sched.Rounds[round]
		if len(order) != 2*len(shape.labels) {
			return nil, fmt.Errorf("schedule %s does not fit this agent: it has %s, but round %d of the agent has %d calls: the agent changed since the schedule was printed: run without AGENTIDEM_SCHEDULE (or testkit.Replay) to explore its schedules again", sched, scheduleShape(sched), round+1, len(shape.labels))
		}
		return order, nil
	}
}

// scheduled runs one interleaving scenario with the given chooser, inside
// bubble when there is one; eager runs it as an eager schedule
// (Schedule.Eager).
func (s *Suite) scheduled(ctx context.Context, choose chooser, bubble Bubble, eager bool) (*Result, *scheduler, error) {
	sc := interleavingScenario("pending")
	sc.eager = eager
	res, sch, err := s.runGated(ctx, sc, choose, bubble)
	name := sch.schedule.String()
	res.Scenario = ScenarioInterleaving + "/" + name
	res.Schedule, res.Legend = name, sch.legend()
	res.Replay = s.shardEnv() + s.seedEnv() + s.cfg.replay(res.Scenario) + scheduleEnv(name)
	for i := range res.Findings {
		res.Findings[i].Scenario = res.Scenario
		res.Findings[i].Replay = res.Replay
	}
	explainOrder(res, res.Legend)
	if sch.err != nil {
		res.Error = strings.TrimPrefix(res.Error+"; "+sch.err.Error(), "; ")
		res.Inconclusive, res.Safe = true, false
		if err == nil {
			err = sch.err
		}
	}
	if sch.hazard != "" {
		res.Error = strings.TrimPrefix(res.Error+"; "+sch.hazard, "; ")
		res.Inconclusive, res.Safe = true, false
		if err == nil {
			err = fmt.Errorf("%s", sch.hazard)
		}
	}
	return res, sch, err
}

// outerOps returns the names of the ops whose calls the baseline saw make
// calls inside their own (a tool calling a tool), nil before the baseline
// or when none did.
func (s *Suite) outerOps() map[string]bool {
	if s.base == nil {
		return nil
	}
	var outer map[string]bool
	for i := range s.base.Ops {
		if p := s.base.Ops[i].Parent; p != "" {
			if outer == nil {
				outer = map[string]bool{}
			}
			_, name, _ := strings.Cut(p, ":") // "<invocation>:<op>#<k>"
			if j := strings.LastIndexByte(name, '#'); j >= 0 {
				name = name[:j]
			}
			outer[name] = true
		}
	}
	return outer
}

// runGated runs sc under a scheduler that follows choose, inside bubble
// when there is one and on real time otherwise.
func (s *Suite) runGated(ctx context.Context, sc Scenario, choose chooser, bubble Bubble) (*Result, *scheduler, error) {
	var (
		res *Result
		sch *scheduler
		err error
	)
	body := func(quiesce func()) {
		sch = newScheduler(nil, quiesce == nil, choose)
		sch.outer = s.outerOps()
		sch.twins = sc.Concurrent
		sch.crashFirst = sc.Fault.Kind == FaultCrash
		sch.eager = sc.eager
		sch.schedule.Eager = sc.eager
		if quiesce == nil {
			sch.quiesce = sch.realtimeQuiesce
		} else {
			sch.wait, sch.bodyBound = quiesce, s.cfg.stallTimeout()
			sch.quiesce = sch.bubbleQuiesce
			s.inBubble = true
			defer func() { s.inBubble = false }()
		}
		sc.sched = sch
		res, _, err = s.run(ctx, sc)
	}
	if bubble != nil {
		bubble(body)
	} else {
		body(nil)
	}
	return res, sch, err
}

// seedEnv is what a replay line of an interleaving sets first,
// "AGENTIDEM_SEED=2 ", where the seed came from the environment: which
// schedules a PCT exploration samples, and so which subtests there are,
// follows from the seed, and the line's -run pattern, run without it,
// selected a schedule that the default seed's sample does not hold, and
// go test printed ok [no tests to run] (red team rtI, item 2). With Seed
// the test sets its seed itself.
func (s *Suite) seedEnv() string {
	if s.cfg.seedEnv {
		return fmt.Sprintf("AGENTIDEM_SEED=%d ", s.cfg.seed)
	}
	return ""
}

func scheduleEnv(name string) string {
	return fmt.Sprintf(" (or: AGENTIDEM_SCHEDULE='%s')", name)
}

// record keeps the result of a schedule.
//
// An ordering finding stays in every schedule that shows it: the report
// groups them into one problem, and go test prints it once (a later
// schedule's subtest has a line that points back). Kept at the first
// schedule only, the others were "safe": true in the report file, ok in
// the summary and the HTML, and the replay lines of their subtests passed,
// though each ran the dependent call before its prerequisite had returned,
// or the two writes in flight together (red team rtV #14). With State, a
// concurrent_writes_same_entity finding is held back until every schedule
// has run, which may show that the two writes commute (commutingWrites).
func (s *Suite) record(res *Result, each func(*Result)) {
	kept := res.Findings[:0]
	for _, f := range res.Findings {
		if f.Code == CodeConcurrentWritesEntity && s.cfg.state != nil {
			s.commuting = append(s.commuting, heldFinding{res, f})
			continue
		}
		kept = append(kept, f)
	}
	res.Findings = kept
	res.Safe = !res.Inconclusive
	for _, f := range res.Findings {
		if f.Severity == SeverityError {
			res.Safe = false
		}
	}
	s.results = append(s.results, res)
	s.scheduledResults = append(s.scheduledResults, res)
	if each != nil {
		each(res)
	}
}

// orderKey identifies an order finding across schedules.
func orderKey(f Finding) string {
	ops := append([]string(nil), f.Ops...)
	sort.Strings(ops)
	return f.Code + "\x00" + strings.Join(ops, ",") + "\x00" + strings.Join(f.Identities, ",")
}

// outcomes compares the outcomes of all schedules run so far and adds an
// order_variant_outcome finding to the first schedule that disagrees with
// the first one.
func (s *Suite) outcomes() {
	if s.cfg.outcome == nil {
		return
	}
	variantOutcome(s.scheduledResults, s.outcomesSame)
}

// outcomesSame reports whether two scheduled runs ended with the same
// outcome: alike (outcomesAlike), or, where their State ends are one world
// (sameWorld), listing the same rows under numbers the sink gave in the
// order they landed (numberedRowsAlike).
func (s *Suite) outcomesSame(a, b *Result) bool {
	if outcomesAlike(a, b) {
		return true
	}
	// The ends differ (the sink numbered the rows otherwise), and are one
	// world: where they are the same, no number the sink gave differs
	// either, and an Outcome that does is the order's (answers ranked as
	// they came back, under "id": red team, /tmp/rt26 o1).
	if s.cfg.state == nil || a.Trace == nil || b.Trace == nil || a.Trace.end == "" || a.Trace.end == b.Trace.end || !s.sameWorld(a.Trace.end, a.Trace, b.Trace.end, b.Trace) {
		return false
	}
	oa, ob := a.Outcome, b.Outcome
	if holdsClock(oa) || holdsClock(ob) {
		na, nb := namedIn(a.Trace), namedIn(b.Trace)
		oa, ob = withoutMoments(oa, na, nb), withoutMoments(ob, na, nb)
	}
	return numberedRowsAlike(oa, ob, rowIDs(a.Trace.end), rowIDs(b.Trace.end))
}

// variantOutcome adds the order_variant_outcome finding to the first of the
// scheduled results whose outcome differs from the first one's (alike).
func variantOutcome(scheduled []*Result, alike func(a, b *Result) bool) {
	if len(scheduled) < 2 {
		return
	}
	first := scheduled[0]
	differ := 0
	var witness *Result
	for _, r := range scheduled[1:] {
		if !alike(first, r) {
			differ++
			if witness == nil {
				witness = r
			}
		}
	}
	if witness == nil {
		return
	}
	witness.Findings = append(witness.Findings, Finding{
		Code: CodeOrderVariantOutcome, Severity: SeverityError, Scenario: witness.Scenario, Replay: witness.Replay,
		Message: fmt.Sprintf("the outcome depends on the order of parallel calls: %d of %d schedules end differently from the listed one.\n    %s gives %s\n    %s gives %s\n    replay them: %s | %s",
			differ, len(scheduled), first.Scenario, first.Outcome, witness.Scenario, witness.Outcome, first.Replay, witness.Replay),
	})
	witness.Safe = false
}

// PartialBatchPlan lists a partial_batch_failure scenario for every call
// that was in flight with others in the listed schedule: the call fails
// with a conflict while the rest of its batch succeeds. It is empty when
// the baseline failed, as Plan is: testkit ran a failed baseline's
// partial batch failures, two scenarios whose faults all fired, beside
// "BASELINE FAILED" (red team, /tmp/rtP #9).
func (s *Suite) PartialBatchPlan() []Scenario {
	if !s.BaselineOK() || s.pre == nil || s.pre.err != nil || s.pre.sch.hazard != "" || s.selectErr != nil {
		return nil
	}
	first := s.pre.res
	var plan []Scenario
	for i, op := range first.Trace.Ops {
		if op.Batch == 0 || op.Kind != KindWrite {
			continue
		}
		if sameAsEarlier(first.Trace, i) != nil {
			continue // its first call's scenarios stand for it (samecall.go)
		}
		target := fmt.Sprintf("%s#%d", op.Name, op.Occurrence)
		plan = append(plan, Scenario{
			Name: ScenarioPartialBatch + "/" + target, Kind: ScenarioPartialBatch,
			Fault:          Fault{Kind: FaultConflict, Op: op.Name, Occurrence: op.Occurrence},
			OperationIndex: i, Deliveries: 1, listed: true,
		})
	}
	return plan
}
