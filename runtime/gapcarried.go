package runtime

import "slices"

// Effects carried between calls. A client that gives up before its
// payments service books the charge (its timeout shorter than the
// booking) fails, and the booking lands after its call, outside every
// traced write: no window shows it. With a key made afresh for each
// delivery, two deliveries at once each leave a booking so; their last
// attempts, answered by the replay of their own key, change nothing in
// their windows, and were absorbed (by State, or as one execution did in
// the baseline, where the one booking had landed inside a call's window
// on a loaded machine): a missed duplicate_write, 3 runs in 40 of
// TestOverlappedRepeatsAfterABookingLandedBetweenCallsAreJudgedByTheEnd's
// buggy agent beside 3 busy loops (task fK). Whether a booking lands
// inside a window or between calls is the machine's timing, so a quiet
// window of a repeat says nothing where it happened between calls.
//
// So where all of these hold, the repeats absorbed by their windows are
// judged by the end instead, and count (judgeRepeatsIn):
//   - a call of the op, for this identity, failed by itself (no fault of
//     the suite's) and is no execution of its group: no window showed
//     what it did;
//   - the state changed outside every traced write in this run (the
//     judge's gaps), in a part where the run's end differs from the
//     baseline's;
//   - both ends were the state once the agent returned or held still
//     (landedByReturn), and they are not alike.
//
// A correct agent (one key for the order) ends as one delivery does and
// is not touched; a world that changes by itself (a heartbeat) has no end
// that held still.

// carriedNote is why a repeat that changed nothing in its window counts.
const carriedNote = "calls of it failed by themselves and left no window showing what they did, the state changed between calls, outside every traced write, and the run ended otherwise than one delivery there: the repeats' own windows, which changed nothing, cannot say the effect was not made again, so this compares the end state with what one delivery left"

// carriedBetweenCalls reports whether, in run tr, a call of op for
// identity id failed by itself outside its group's executions (idx), and
// a change of the state outside every traced write (tr.gaps) meets the
// parts the end differs in from the baseline's (endParts).
func carriedBetweenCalls(tr *Trace, op, id string, idx []int, endParts *parts, views *stateViews) bool {
	if len(tr.gaps) == 0 {
		return false
	}
	failed := false
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.Name == op && o.Identity == id && o.Kind == KindWrite && o.Status == StatusFailed && o.Fault == FaultNone && !slices.Contains(idx, i) {
			failed = true
			break
		}
	}
	if !failed {
		return false
	}
	gp := &parts{}
	for _, g := range tr.gaps {
		gp.merge(partsOf(g[0], g[1], views))
	}
	return meets(gp, endParts, nil, false, views)
}

// quietCluster reports whether the snapshots around overlapped call o's
// cluster are equal: the cluster changed nothing.
func quietCluster(o *Operation) bool {
	before, after := o.stateWindow()
	return before == after
}
