package runtime

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// An end that differs only where this run changed nothing. Two deliveries
// at once whose calls overlapped have no window each: their cluster is
// judged by the end, against what one delivery left in the baseline. A
// heartbeat slower than a run (an account's last_seen flipped every
// 130 ms) beat once inside the baseline's call on a loaded machine, and
// not at all in the shorter concurrent run: the ends differed in
// last_seen alone, a place the baseline's call window changed, and the
// correct agent was a duplicate_write (CI229, CI239,
// TestAHeartbeatSlowerThanTheLookIsNoSecondEffect).
//
// Two comparisons met it. Where the calls' cluster had a window of its
// own, it ended otherwise than one execution's window only in values the
// cluster did not change (untouchedInWindow); where the effect landed
// after the calls (a worker, a Settle), the run's end differed from the
// baseline's only in values no call, gap or wait of this run changed
// (untouchedEndDiff). Either way the calls did less there than one
// execution, or undid what they did: what the baseline changed there was
// the world's doing, or the call's, and then two executions could have
// undone each other (a toggle flipped twice ends where it began; a
// check-then-toggle whose two deliveries both read "not archived" and
// both archive, which no sequential delivery shows: red team rQ). So the
// rule asks the suite's earlier scenarios (loneWindows): only where one of
// them, in which the call took effect once, ended with those values as it
// began is the baseline's change there taken for the world's, and the
// repeat unjudged, the scenario inconclusive, never counted and never
// passed. Where every such run changed them (the toggle is the op's own
// effect), or none ran (a suite run one scenario at a time), the cluster
// is judged as before (TestACheckThenToggleDoneTwiceAtOnceIsCaught). The
// same evidence guards the rule of unseen.go for overlapped calls: one
// run that changed nothing with one execution. A value the calls did
// change (a balance charged twice) is judged as before, and
// so is one the run's calls made: where the cluster's window is judged,
// each value must be where it was, as it was, when the run's first call
// began (heldFromStart). Tickets the agent opened and then swapped, the
// swap delivered twice, hold at the end what the opens made, which the
// run began without: a duplicate_write, as before
// (TestRealDuplicatesBesideNumberedTicketsAreCaught).

// untouchedEndNote says why repeat id of op was not judged, naming the
// values (diff) the end differs in.
func untouchedEndNote(op, id string, diff [][]string) string {
	names := make([]string, 0, len(diff))
	for _, p := range diff {
		names = append(names, restlessName(p))
	}
	return fmt.Sprintf("%s (a repeat of %s) was not judged: its calls overlapped, so what they left together is compared with what one delivery left in the baseline, and the two differ only in %s, which this run's calls did not change: what the world changed by itself in the baseline (a heartbeat, a last-seen mark) and two executions undoing each other (a toggle flipped twice) look alike there; the sequential delivery judges each call by its own window, and leaving what changes by itself out of State lets the end judge", id, op, clip(strings.Join(names, ", "), maxChange/2))
}

// untouchedInWindow returns the values in which an overlapped cluster's
// window (before → after) ended otherwise than one execution's, which
// ended at one, where the cluster changed none of them: it did less there
// than one execution, or undid what it did. Nil where it ended otherwise
// in a value it changed, in more than values, or alike.
func untouchedInWindow(one, before, after string) [][]string {
	diff, ok := valueChanges(one, after)
	if !ok || len(diff) == 0 {
		return nil
	}
	own, ok := valueChanges(before, after)
	if !ok {
		return nil
	}
	changed := map[string]bool{}
	for _, p := range own {
		changed[pathKey(p)] = true
	}
	for _, p := range diff {
		if changed[pathKey(p)] {
			return nil
		}
	}
	return diff
}

// runStart is the state the run of tr was in when its first call began
// (its window's first snapshot), "" where no call was seen so.
func runStart(tr *Trace) string {
	for i := range tr.Ops {
		if e := tr.Ops[i].effect(); e != nil && e.before != "" {
			return e.before
		}
	}
	return ""
}

// heldFromStart reports whether each of places (paths restlessPlaces
// gives) is found in snapshot from and holds in snapshot to the value it
// held there, moments compared as moments (withoutClocks).
func heldFromStart(from, to string, places [][]string) bool {
	if from == "" || to == "" {
		return false
	}
	u, errU := decodeState(withoutClocks(from, nil))
	v, errV := decodeState(withoutClocks(to, nil))
	if errU != nil || errV != nil {
		return false
	}
	for _, p := range places {
		x, okx := restlessValue(u, p)
		y, oky := restlessValue(v, p)
		if !okx || !oky || !equalValues(x, y) {
			return false
		}
	}
	return true
}

// restlessValue returns the value at path (as restlessPlaces names it: a key, a
// row by its naming column, a list's only row, a line by how it begins)
// in decoded state v; false where it is not there.
func restlessValue(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch {
		case strings.HasPrefix(seg, linePrefix):
			l, ok := v.([]any)
			if !ok {
				return nil, false
			}
			prefix, found := strings.TrimPrefix(seg, linePrefix), false
			for _, e := range l {
				if s, ok := e.(string); ok && strings.HasPrefix(s, prefix) {
					if found {
						return nil, false // two lines begin so: not one place
					}
					v, found = s, true
				}
			}
			if !found {
				return nil, false
			}
		case seg == rowSelect:
			l, ok := v.([]any)
			if !ok || len(l) != 1 {
				return nil, false
			}
			v = l[0]
		case strings.HasPrefix(seg, rowSelect):
			l, ok := v.([]any)
			if !ok {
				return nil, false
			}
			col, key, _ := strings.Cut(strings.TrimPrefix(seg, rowSelect), "\x00")
			var row any
			for _, r := range l {
				if m, ok := r.(map[string]any); ok && encode(m[col]) == key {
					if row != nil {
						return nil, false
					}
					row = m
				}
			}
			if row == nil {
				return nil, false
			}
			v = row
		default:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[seg]; !ok {
				return nil, false
			}
		}
	}
	return v, true
}

// loneWindows keeps, by op and identity, the start and the end of the
// runs in which a write of that op for that identity took effect once, in
// the scenarios of a suite judged so far: up to loneWindowsKept each.
type loneWindows struct {
	mu   sync.Mutex
	byOp map[string][][2]string
	// own keeps, by op and identity, the call's own window (the
	// snapshots just before and after it) in those runs where it ran
	// alone between snapshots: whether its change was there when it
	// returned (landsInWindow).
	own map[string][][2]string
}

// loneWindowsKept bounds the runs kept for one op and identity.
const loneWindowsKept = 8

// record keeps the start and end of run tr under each op and identity
// whose write took effect once in it.
func (l *loneWindows) record(tr *Trace) {
	start := runStart(tr)
	if start == "" || tr.end == "" {
		return
	}
	n := map[string]int{}
	var seen map[string][2]string
	for _, o := range executedInOrder(tr) {
		k := o.Name + "\x00" + o.Identity
		n[k]++
		if before, after := o.stateWindow(); o.stateSeen() && o.StateError == "" && before != "" && after != "" {
			if seen == nil {
				seen = map[string][2]string{}
			}
			seen[k] = [2]string{before, after}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, c := range n {
		if c != 1 {
			continue
		}
		if w, ok := seen[k]; ok && len(l.own[k]) < loneWindowsKept {
			if l.own == nil {
				l.own = map[string][][2]string{}
			}
			l.own[k] = append(l.own[k], w)
		}
		if len(l.byOp[k]) >= loneWindowsKept {
			continue
		}
		if l.byOp == nil {
			l.byOp = map[string][][2]string{}
		}
		l.byOp[k] = append(l.byOp[k], [2]string{start, tr.end})
	}
}

// landsInWindow reports whether, in at least two earlier scenarios in
// which the write of op for identity id took effect once and ran alone
// between snapshots, its own window made the change that one execution
// made in the baseline's window w, and in none of them another change or
// none: the call's effect is there when it returns, with nothing of it
// left to land later. False for a nil l, or where fewer such runs were
// kept (a suite run one scenario at a time), or any one of them changed
// otherwise (an effect a worker lands after the call, a heartbeat inside
// the window).
func (l *loneWindows) landsInWindow(op, id string, w [2]string) bool {
	if l == nil || w[0] == "" || w[1] == "" {
		return false
	}
	l.mu.Lock()
	runs := l.own[op+"\x00"+id]
	l.mu.Unlock()
	if len(runs) < 2 {
		return false
	}
	change := func(before, after string) string {
		if holdsClock(before) || holdsClock(after) {
			before, after = withoutClocks(before, nil), withoutClocks(after, nil)
		}
		return describeChange(before, after, -1)
	}
	one := change(w[0], w[1])
	if one == "" {
		return false
	}
	for _, r := range runs {
		if change(r[0], r[1]) != one {
			return false
		}
	}
	return true
}

// without reports whether an earlier scenario in which a write of op for
// identity id took effect once ended with each of places as it began
// (heldFromStart): one execution, done without changing them, so that
// they are no effect of it (a heartbeat that beat inside the baseline's
// call, and in none of those runs). False where no such run was kept (nil
// l, a suite run one scenario at a time): a place one execution changed
// may be the op's own, and two executions may have undone it (a
// check-then-toggle, whose two deliveries at once both read "not
// archived" and each archive, and whose other scenarios all end archived:
// red team rQ).
func (l *loneWindows) without(op, id string, places [][]string) bool {
	return l.anyRun(op, id, func(start, end string) bool { return heldFromStart(start, end, places) })
}

// anyRun reports whether one of the runs kept for op and identity id,
// its start and end, meets f; false for a nil l.
func (l *loneWindows) anyRun(op, id string, f func(start, end string) bool) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	runs := l.byOp[op+"\x00"+id]
	l.mu.Unlock()
	return slices.ContainsFunc(runs, func(r [2]string) bool { return f(r[0], r[1]) })
}

// endedWhereBegan reports whether an earlier scenario in which a write of
// op for identity id took effect once ended where it began, moments
// compared as moments: one execution that changed nothing State reads,
// as the calls of a tool whose client the first Setup's world bound do
// (unseen.go). False where no such run was kept: two deliveries at once
// that left nothing, where one left a change, may have undone each other
// (a check-then-toggle, red team rQ).
func (l *loneWindows) endedWhereBegan(op, id string) bool {
	return l.anyRun(op, id, func(start, end string) bool {
		return start == end || withoutClocks(start, nil) == withoutClocks(end, nil)
	})
}
