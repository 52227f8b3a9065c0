package runtime

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Untraced writes in a repeat's window. The State judge takes its
// snapshots around traced writes; a write the agent makes without a traced
// tool (an audit line appended after a call) is in no window of its own.
// Under concurrent delivery, one delivery's call returns and its code goes
// on, untraced, while the other delivery's call is still in flight: what
// that code writes lands in the other call's window, and the repeat would
// be taken to have made it.
//
// The baseline tells such changes apart. There the agent ran alone, and
// the judge kept what changed between its windows (judge.gaps). A change
// that a repeat's window holds is left out of the repeat's effect only
// when all of these hold:
//
//   - the window was open while another invocation of the run ran its own
//     code between traced writes (cluster.others): a concurrent delivery;
//   - no traced write of the baseline changed that place in its window: a
//     place a traced write touches is always the write's (a list's entry
//     is a place of its own, so an audit row appended to the table a
//     traced insert appends to is apart from the insert's row, while the
//     row or field the write sets is never left out);
//   - a gap of the baseline made the same change there: the same value
//     before and after, or, for a list's entry, the same number of copies
//     added or removed;
//   - no Settle is given: with one, a change between windows may be a
//     traced write's effect landing late, which the same change in a
//     repeat's window would be too.
//
// A repeat judged so is absorbed, and the trace's notes say what was left
// out and why: a repeat whose tool itself made exactly that change (or a
// traced write's effect that lands after its call returned, made twice)
// cannot be told from the other delivery's untraced write.

// untraced is what the baseline says of the changes made outside traced
// writes, decoded once, on first use.
type untraced struct {
	base *Trace
	once sync.Once
	// windows and gaps are the baseline's windows of traced writes and
	// the changes between them, decoded.
	windows, gaps [][2]*stateView
	// restless are the places that changed twice or more while the
	// baseline's end was read again (a heartbeat), by key: also where
	// the end held still at last, as a heartbeat starved by a loaded
	// machine lets it (restlessKnown).
	restless map[string][]string
	// own is, for a run whose own end never held still, the states it
	// went through as its end was read, and its end: places that changed
	// twice or more there are restless too. A heartbeat the baseline's
	// end never saw beat (its beats, starved by a loaded machine, all
	// came before the end was read) beat on in the later runs, inside
	// their repeats' windows, and a correct agent was a duplicate_write
	// in every scenario with a repeat (CI197, TestHeartbeatStarvedInTheBaseline
	// under -race; TestAHeartbeatTheBaselineNeverSawBeatIsRestless).
	own []string
	// ownRestless are the places that changed twice or more in own: used
	// only to leave a repeat unjudged (worldRestlessOwn), never to absorb
	// one, since this run's own restless places may be what its repeats
	// changed (a counter of attempts a retry loop bumps).
	ownRestless map[string][]string
	worldValuesState
}

// untracedIn returns what the baseline base says of untraced changes; nil
// when it saw none, or when settle says effects land late.
func untracedIn(base *Trace, settle bool) *untraced {
	if base == nil || len(base.gaps) == 0 || settle {
		return nil
	}
	return &untraced{base: base}
}

func (u *untraced) load() {
	u.once.Do(func() {
		var views stateViews
		seen := map[[2]string]bool{}
		for i := range u.base.Ops {
			v := u.base.Ops[i].effect()
			if v == nil || !v.inCluster || v.clErr != "" || v.before == "" || v.after == "" {
				continue
			}
			w := [2]string{v.before, v.after}
			if seen[w] || w[0] == w[1] {
				continue
			}
			seen[w] = true
			b, a := views.of(w[0]), views.of(w[1])
			if b == nil || a == nil {
				// A window that does not decode may have changed any
				// place: nothing is left out.
				u.gaps = nil
				return
			}
			u.windows = append(u.windows, [2]*stateView{b, a})
		}
		u.ownRestless = movedTwice(u.own, &views)
		if len(u.base.passed) > 0 {
			// Changed twice or more: a mail the worker sent once while
			// the end was read is the world's change, not a heartbeat.
			// Also where the end held still at last: a heartbeat's
			// goroutine starved by a loaded machine (go test -race
			// beside CPU burners) beat 1, 2, 3, 4 while the end was
			// read, then not for the hold, and the world was taken
			// for one that holds still; a correct agent's repeat whose
			// window held a beat was a duplicate_write (1 run of 20 of
			// TestWorldWorkerChangeInARepeatsWindow's heartbeat case;
			// TestHeartbeatStarvedInTheBaseline).
			u.restless = movedTwice(append(slices.Clone(u.base.passed), u.base.end), &views)
		}
		for _, g := range u.base.gaps {
			if g[1] == u.base.end && u.base.returned != "" {
				// The last gap runs past the agent's return: only what
				// changed before it may be the agent's own code (an
				// audit line written after its last call). What the
				// world did after it (a worker of Setup's mailing what
				// a call queued) is no delivery's code, and a repeat
				// whose window holds it is judged by worldAfter, which
				// looks at the end: taken here for another delivery's
				// write, a second mail queued by the repeat, landing
				// after the window, passed (red team, /tmp/rt26 w1).
				if g[0] == u.base.returned {
					continue
				}
				g[1] = u.base.returned
			}
			if b, a := views.of(g[0]), views.of(g[1]); b != nil && a != nil {
				u.gaps = append(u.gaps, [2]*stateView{b, a})
			}
		}
	})
}

// change reports whether the change from x to y at place p (values read
// with at) is one the baseline made only outside traced writes.
func (u *untraced) change(p place, x, y string) bool {
	for _, w := range u.windows {
		if !sameValue(w[0].at(p), w[1].at(p)) {
			return false
		}
	}
	for _, g := range u.gaps {
		gx, gy := g[0].at(p), g[1].at(p)
		if p.elem {
			if d := count(y) - count(x); d != 0 && count(gy)-count(gx) == d {
				return true
			}
			continue
		}
		if sameValue(gx, x) && sameValue(gy, y) {
			return true
		}
	}
	return false
}

func count(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// applies reports whether the rule may leave anything out of repeat o's
// window: another invocation ran its own code while it was open.
func (u *untraced) applies(o *Operation) bool {
	if u == nil || o.effect() == nil || !o.effect().others {
		return false
	}
	u.load()
	return len(u.gaps) > 0
}

// explains reports whether snapshots a and b differ only by untraced
// changes, and returns the places.
func (u *untraced) explains(o *Operation, a, b string, views *stateViews) ([]place, bool) {
	if !u.applies(o) || a == b {
		return nil, false
	}
	av, bv := views.of(a), views.of(b)
	places, ok := changedPlaces(av, bv)
	if !ok || len(places) == 0 {
		return nil, false
	}
	for _, p := range places {
		if !u.change(p, av.at(p), bv.at(p)) {
			return nil, false
		}
	}
	return places, true
}

// restlessKnown reports whether the baseline saw places change by
// themselves twice or more while its end was read again (restless).
func (u *untraced) restlessKnown() bool {
	u.load()
	return len(u.restless) > 0
}

// ownRestlessOut is restlessOut with the places that changed twice or
// more as this run's own end was read (ownRestless) left out too; s when
// there are none.
func (u *untraced) ownRestlessOut(s string) string {
	u.load()
	if len(u.ownRestless) == 0 {
		return u.restlessOut(s)
	}
	return nullPaths(u.restlessOut(s), u.ownRestless)
}

// restlessOut returns snapshot s with the places that change by
// themselves (restless: a heartbeat) set to null, for comparing states of
// a world that never held still; s when there are none or it does not
// decode.
func (u *untraced) restlessOut(s string) string {
	u.load()
	if len(u.restless) == 0 {
		return s
	}
	return nullPaths(s, u.restless)
}

// nullOut returns snapshot s with the places of keys (place.key) set to
// null; s when it does not decode. An entry of a list holds no value of
// its own, and is left.
func nullOut(s string, keys map[string]bool) string {
	v, err := decodeState(s)
	if err != nil {
		return s
	}
	for k := range keys {
		if strings.Contains(k, "\x02") {
			continue // an entry of a list: not a place that holds a value
		}
		path := strings.Split(k, "\x01")
		m, ok := v.(map[string]any)
		for i := 0; ok && i < len(path)-1; i++ {
			m, ok = m[path[i]].(map[string]any)
		}
		if ok {
			if _, held := m[path[len(path)-1]]; held {
				m[path[len(path)-1]] = nil
			}
		}
	}
	return encode(v)
}

// sameChangeBut reports whether the window from before to after made the
// change one execution made from w0 to w1, apart from untraced changes:
// at every other place it changed, and only there, it started and ended
// as that execution did. It returns the untraced places.
func (u *untraced) sameChangeBut(o *Operation, w0, w1, before, after string, views *stateViews) ([]place, bool) {
	if !u.applies(o) {
		return nil, false
	}
	bv, av := views.of(before), views.of(after)
	pbv, pav := views.of(w0), views.of(w1)
	if bv == nil || av == nil || pbv == nil || pav == nil {
		return nil, false
	}
	places, ok := changedPlaces(bv, av)
	one, ok2 := changedPlaces(pbv, pav)
	if !ok || !ok2 {
		return nil, false
	}
	rest := map[string]bool{}
	var left []place
	for _, p := range places {
		if u.change(p, bv.at(p), av.at(p)) {
			left = append(left, p)
			continue
		}
		if !sameValue(bv.at(p), pbv.at(p)) || !sameValue(av.at(p), pav.at(p)) {
			return nil, false
		}
		rest[p.key()] = true
	}
	if len(left) == 0 || len(rest) != len(one) {
		return nil, false
	}
	for _, p := range one {
		if !rest[p.key()] {
			return nil, false
		}
	}
	return left, true
}

// untracedNote is the trace's note for repeat o of op, judged without the
// untraced changes at places (from a to b).
func untracedNote(o *Operation, places []place, a, b string, views *stateViews) string {
	return fmt.Sprintf("%s's repeat %s was judged without what its window also changed (%s): in the baseline only code outside every traced write changed it so, and another delivery ran its own code, untraced, while the window was open, so it is taken for that delivery's untraced write (an audit line); the suite cannot tell it from the same change made by the repeat itself, or by a traced write whose effect lands after its call returned: make that write a traced call, or leave it out of State, for the suite to judge it",
		o.Name, o.ID, describePlaces(places, views.of(a), views.of(b), maxChange/2))
}

// movedTwice returns the places that changed twice or more from one of
// states to the next, by key, each as the path nullRestless reads: where
// a list holds one row, or rows a column names, the row's fields that
// changed, not the row (restlessPlaces). A heartbeat that beats in the
// account's own row (its last_seen) left the whole row out, and with it
// the mail count beside it that a worker bumped: a window where the
// worker mailed what the first call queued compared as "only the
// heartbeat moved", and the correct agent's repeat was a duplicate_write
// (red team rQ's welcome worker with no Settle, every run;
// TestAHeartbeatInTheRowOfTheWorkersMailIsNoSecondMail). Other places
// are as changedPlaces names them; an entry of a list, or a row by its
// key, is counted as before (a restless world) with a nil path: it holds
// no value to leave out.
func movedTwice(states []string, views *stateViews) map[string][]string {
	var out map[string][]string
	times := map[string]int{}
	for i := 1; i < len(states); i++ {
		a, b := views.of(states[i-1]), views.of(states[i])
		places, ok := changedPlaces(a, b)
		if !ok {
			continue
		}
		var paths [][]string
		restlessPlaces(nil, a.v, b.v, &paths)
		fine := len(paths)
		keys := make([]string, 0, len(paths)+len(places))
		for _, p := range paths {
			keys = append(keys, strings.Join(p, "\x01"))
		}
		for _, p := range places {
			if p.elem || slices.ContainsFunc(p.path, func(s string) bool { return strings.HasPrefix(s, rowSegment) }) {
				// An entry, a row by its key: counted, as before, but
				// no value nullRestless reads (a nil path).
				keys, paths = append(keys, p.key()), append(paths, nil)
				continue
			}
			if slices.ContainsFunc(paths[:fine], func(f []string) bool { return len(f) >= len(p.path) && slices.Equal(f[:len(p.path)], p.path) }) {
				continue // the fields that changed in it, named above
			}
			keys, paths = append(keys, p.key()), append(paths, p.path)
		}
		seen := map[string]bool{}
		for i, k := range keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			if times[k]++; times[k] == 2 {
				if out == nil {
					out = map[string][]string{}
				}
				out[k] = paths[i]
			}
		}
	}
	return out
}

// nullPaths returns snapshot s with the values at paths (movedTwice) set
// to null, nil paths aside; s when there are none or it does not decode.
func nullPaths(s string, paths map[string][]string) string {
	if len(paths) == 0 {
		return s
	}
	var ps [][]string
	for _, p := range paths {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return nullRestless(s, ps)
}
