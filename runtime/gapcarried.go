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
//     (landedByReturn), and they are not alike, in more than values this
//     run never changed (a heartbeat's first beat, which came before the
//     baseline's end and after this run's).
//
// A correct agent (one key for the order) ends as one delivery does and
// is not touched; a world that changes by itself (a heartbeat) has no end
// that held still.

// carriedNote is why a repeat that changed nothing in its window counts.
const carriedNote = "calls of it failed by themselves and left no window showing what they did, the state changed between calls, outside every traced write, and the run ended otherwise than one delivery there: the repeats' own windows, which changed nothing, cannot say the effect was not made again, so this compares the end state with what one delivery left"

// carriedBetweenCalls reports whether, in run tr, a call of op for
// identity id failed by itself outside its group's executions (idx), and
// a change of the state outside every traced write (tr.gaps) meets the
// parts the end differs in from the baseline's (endParts), unless the end
// differs only in values this run never changed (endDiffersUntouched;
// base is the baseline's trace, nil where there is none).
func carriedBetweenCalls(tr, base *Trace, op, id string, idx []int, endParts *parts, views *stateViews) bool {
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
	return meets(gp, endParts, nil, false, views) && !endDiffersUntouched(tr, base)
}

// endDiffersUntouched reports whether run tr's end differs from the
// baseline's only in values (fields of objects, of rows found as
// restlessPlaces finds them) that this run never changed: not between
// its calls (its gaps), not in its writes' windows, not after its agent
// returned. A second effect there would have changed them in this run;
// unchanged, they hold what this run began with, and the difference is
// what the baseline's world did by itself. The baseline's Setup, with the
// look for a heartbeat (settledbeat.go), outlasts the first beat of a
// heartbeat slower than the look, which the later, shorter runs end
// before: accounts[0].last_seen a time in the baseline's end and "" in
// a crash scenario's, whose correct agent was a duplicate_write by the
// end, 6 runs of 6 (red team rV's desk, a beat every 130 ms, its queue
// 40 ms). Moments are compared as moments (withoutClocks): two times a
// clock wrote differ in every run. False where the ends differ otherwise
// (a row or an entry added), where a snapshot does not decode, and where
// this run added or removed rows: the end then judges, as before.
func endDiffersUntouched(tr, base *Trace) bool {
	return untouchedEndDiff(tr, base) != nil
}

// untouchedEndDiff returns the values in which run tr's end differs from
// the baseline's (base) where endDiffersUntouched holds, else nil.
func untouchedEndDiff(tr, base *Trace) [][]string {
	if base == nil || base.end == "" || tr.end == "" {
		return nil
	}
	diff, ok := valueChanges(base.end, tr.end)
	if !ok || len(diff) == 0 {
		return nil // more than values, or none
	}
	touched := map[string]bool{}
	pair := func(x, y string) bool {
		if x == "" || y == "" || x == y {
			return true
		}
		ps, ok := valueChanges(x, y)
		for _, p := range ps {
			touched[pathKey(p)] = true
		}
		return ok
	}
	for _, g := range tr.gaps {
		if !pair(g[0], g[1]) {
			return nil
		}
	}
	for i := range tr.Ops {
		if e := tr.Ops[i].effect(); e != nil && !pair(e.before, e.after) {
			return nil
		}
	}
	if !pair(tr.returned, tr.end) {
		return nil
	}
	for _, p := range diff {
		if touched[pathKey(p)] {
			return nil
		}
	}
	return diff
}

// valueChanges returns the values (restlessPlaces) in which snapshot y
// differs from snapshot x, moments compared as moments (withoutClocks);
// ok is false where a snapshot does not decode, or they differ in more
// than values (a row or an entry came or went).
func valueChanges(x, y string) (places [][]string, ok bool) {
	u, errU := decodeState(withoutClocks(x, nil))
	v, errV := decodeState(withoutClocks(y, nil))
	if errU != nil || errV != nil {
		return nil, false
	}
	restlessPlaces(nil, u, v, &places)
	if nullRestless(encode(u), places) != nullRestless(encode(v), places) {
		return nil, false
	}
	return places, true
}

// quietCluster reports whether the snapshots around overlapped call o's
// cluster are equal: the cluster changed nothing.
func quietCluster(o *Operation) bool {
	before, after := o.stateWindow()
	return before == after
}
