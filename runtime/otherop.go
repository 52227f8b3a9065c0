package runtime

import (
	"fmt"
	"slices"
	"strings"
)

// A repeat's window is the snapshots taken before and after its call, and
// anything that lands between them is in it: also the late effect of
// another op's call, made earlier. A consumer that Setup started long-polls
// a queue, takes the confirmation that queueConfirmation sent and mails it
// while a restarted saveOrder runs; in the baseline the same mail landed
// inside queueConfirmation's own window (a long poll wakes at once on the
// send). Read as saveOrder's change, the mail made the correct agent a
// duplicate_write of saveOrder ("mails: null → [...]") in about half the
// runs (red team rtR, awsledger TestOrderLongPollFixedNoSettle).
//
// A change of places that the op changed in no window of the baseline is
// no evidence of a second execution of it, where the run ended as the
// baseline did: foreignWindow tells such a window, and whether another
// op's call, made before the repeat, made that very change in its own
// window in the baseline (then the repeat is absorbed, and a note says
// whose change it was) or not (then nothing says whose it was: the
// repeat is not judged, and its scenario is inconclusive).

// foreignWindow looks at repeat tr.Ops[i]'s window. It reports outside
// when the window changed the state only at places that no window of the
// repeat's op and identity in the baseline (baseWin) changed, and that op
// changed some place there (what it does is known). by names, when outside,
// the ops whose calls account for the change: for each place, a window of
// another op in the baseline changed it from and to the values the
// repeat's window shows, and a call of that op began before the repeat in
// this run. by is nil when a place has no such account.
func foreignWindow(tr *Trace, i int, baseWin map[string][2]string, views *stateViews) (by []string, outside bool) {
	o := &tr.Ops[i]
	if !o.stateSeen() || o.StateChange == "" {
		return nil, false
	}
	before, after := o.stateWindow()
	bv, av := views.of(before), views.of(after)
	places, ok := changedPlaces(bv, av)
	if !ok || len(places) == 0 {
		return nil, false
	}
	// What the op changed in the baseline, by path: a list of rows
	// counts as one place there (a row inserted under a new key is a
	// change of that list).
	own := o.Name + "\x00" + o.Identity + "\x00"
	var footprint [][]string
	for wk, w := range baseWin {
		if !strings.HasPrefix(wk, own) || w[0] == "" || w[1] == "" || w[0] == w[1] {
			continue
		}
		ps, ok := changedPlaces(views.of(w[0]), views.of(w[1]))
		if !ok {
			return nil, false // a window that does not decode: nothing known
		}
		for _, p := range ps {
			footprint = append(footprint, listPath(p.path))
		}
	}
	if len(footprint) == 0 {
		return nil, false
	}
	for _, p := range places {
		q := listPath(p.path)
		if slices.ContainsFunc(footprint, func(f []string) bool { return pathsMeet(f, q) }) {
			return nil, false
		}
	}
	// Each place, as another op's window changed it in the baseline.
	calledBefore := func(op string) bool {
		for j := range i {
			if c := &tr.Ops[j]; c.Name == op && c.Kind == KindWrite && (c.Status == StatusSuccess || landed(c)) {
				return true
			}
		}
		return false
	}
	for _, p := range places {
		from, to := bv.at(p), av.at(p)
		found := ""
		for wk, w := range baseWin {
			op, _, _ := strings.Cut(wk, "\x00")
			if op == o.Name || w[0] == "" || w[1] == "" || w[0] == w[1] {
				continue
			}
			wb, wa := views.of(w[0]), views.of(w[1])
			if wb == nil || wa == nil || !sameValue(wb.at(p), from) || !sameValue(wa.at(p), to) || !calledBefore(op) {
				continue
			}
			if found == "" || op < found {
				found = op // the same op on every run, maps walked in any order
			}
		}
		if found == "" {
			return nil, true
		}
		if !slices.Contains(by, found) {
			by = append(by, found)
		}
	}
	slices.Sort(by)
	return by, true
}

// listPath is path up to the first row of a list in it: the list.
func listPath(path []string) []string {
	for n, k := range path {
		if strings.HasPrefix(k, rowSegment) {
			return path[:n]
		}
	}
	return path
}

// pathsMeet reports whether one of two paths is the other or lies inside
// it.
func pathsMeet(a, b []string) bool {
	n := min(len(a), len(b))
	return slices.Equal(a[:n], b[:n])
}

// foreignNote is the trace's note for repeat o, whose window changed only
// places o's op changed in no window of the baseline, as the windows of
// the ops by changed them there.
func foreignNote(o *Operation, by []string) string {
	return fmt.Sprintf("%s's repeat %s was not counted although the state changed while it ran (%s): its window changed no place that %s changed in the baseline, and changed them as the window of %s did there, a call of which was made before the repeat: that call's effect landing late (a consumer of a queue, a worker that Setup started, carrying it out), and the run ended as the baseline did; give a Settle that waits for that work for each call's window to hold its own effect", o.Name, o.ID, clip(o.StateChange, maxChange/2), o.Name, strings.Join(by, " and "))
}

// foreignUnjudgedNote says why repeat o of the write first was not judged
// where its window changed only places o's op changed in no window of the
// baseline, and no other op's call accounts for the change.
func foreignUnjudgedNote(o *Operation, first string) string {
	return fmt.Sprintf("%s (a repeat of %s, first run as %s) was not judged: its window changed the state (%s) only at places that %s changed in no window of the baseline, and no call made before it changed them so in the baseline; the run ended as the baseline did, so no second effect of %s stayed where it changes the state, but the suite cannot tell whose change that was (the world's, another call's effect landing late) nor whether the repeat set a second effect going that lands later; give a Settle that waits for the world's work (testkit.SettleUntil) for each call's window to hold its own effect", o.ID, o.Name, first, clip(o.StateChange, maxChange/2), o.Name, o.Name)
}

// unjudgedLate undoes the judgement of the repeats of the ops in lateIn
// that were absorbed because their window held no change: in this run a
// call of such an op had its effect land after its own window, in the
// window of the repeat lateIn names (foreignWindow), so an empty window
// of its repeat is no sign that the repeat did nothing; what it set going
// may land after the end was read. Absorbed so, the repeat of a
// confirmation queued twice on a standard queue, whose consumer had not
// mailed the second when the end was read, passed. The repeats are left
// unjudged, the scenario inconclusive, with a note for each op.
func unjudgedLate(tr *Trace, lateIn map[string]string) {
	if len(lateIn) == 0 {
		return
	}
	noted := map[string]bool{}
	for i := range tr.Ops {
		o := &tr.Ops[i]
		by, ok := lateIn[o.Name]
		if !ok || o.Repeat != RepeatAbsorbed || o.JudgedBy != JudgedByState || o.StateChange != "" || o.Idempotent || o.stateSettled() {
			continue
		}
		o.Repeat, o.JudgedBy = "", ""
		tr.unsettled = true
		if !noted[o.Name] {
			noted[o.Name] = true
			tr.Notes = append(tr.Notes, fmt.Sprintf("%s (a repeat of %s) was not judged: its window held no change, but in this run the effect of an earlier call of %s landed after that call's window, in the window of %s: an empty window is no sign that the repeat did nothing, since what it set going may land after the end was read; give a Settle that waits for the world's work (testkit.SettleUntil, with the count of messages or jobs queued) for the suite to judge it", o.ID, o.Name, o.Name, by))
		}
	}
}

// notLandedYetNote says why overlapped repeat o of the write first was not
// judged where its cluster changed nothing, one execution in the baseline
// changed what (what the cluster left otherwise), and nothing changed
// after the cluster up to the run's end (judgeRepeatsIn, notLandedYet).
func notLandedYetNote(o *Operation, first, what string) string {
	return fmt.Sprintf("%s (a repeat of %s, first run as %s) was not judged: it overlapped other calls, and together they changed nothing where one execution changed the state in the baseline (%s), and nothing changed after them up to the end: what they set going had not landed when the end was read (a worker that Setup started, at rest with the work in hand, such as a consumer whose receive had not returned); less than one delivery's effect is no second one, nor proof that none comes; give a Settle that waits for the world's work (testkit.SettleUntil, with the count of messages or jobs queued) for the suite to judge it", o.ID, o.Name, first, clip(what, maxChange/2))
}
