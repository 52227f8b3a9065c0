package runtime

import (
	"fmt"
	"slices"
	"strings"
)

// A write that changed nothing, beside another op's duplicate. The repeat
// of a write that changed the state in no window, here or in the
// baseline, is absorbed where the run ended as the baseline did
// (nochange.go). An agent with a real duplicate in another op does not
// end so: a naive refund that credits the customer again leaves credits
// of 1000 where one delivery leaves 500. Read as a whole, that end made
// the innocent upsert of the customer's name a duplicate_write too, in
// every scenario that repeated the refund, while the same upsert was
// absorbed beside the keyed refund (red team rtY #3, ent's
// OnConflict...UpdateName on SQLite).
//
// The end's difference is evidence against the repeat only where nothing
// else explains it. Here every place where the end differs from the
// baseline's end was changed, in this run, in the window of a repeat of
// another op (the refund's second execution, 500 → 1000), and that op
// changed the same place in its own window in the baseline (what it
// does): the difference is that repeat's, judged by its own window, and
// says nothing of an op whose calls all held still. What the rule for
// no-change repeats asks otherwise stays: no change outside every traced
// write, here or in the baseline (an effect landing late, after its
// window, is a change outside them: still counted), the state holds what
// the call sets, and nothing of the world at work.

// endChangedByOthers returns, for op and identity id whose executions in
// tr are the calls idx, for each place where end differs from baseEnd,
// the ops whose repeats account for it; nil where a place has none, or
// where the ends are the same. It asks that each call of idx, made by the agent
// itself (not inside another call, nor serving one), held still in its
// window (the snapshots before and after it, or its cluster's, are the
// same), and that for each place a repeat of another op or identity, in
// this run, changed it in a window of its own (not the first execution of
// its op and identity), where a window of that op in the baseline changed
// it too.
func endChangedByOthers(tr *Trace, idx []int, op, id, end, baseEnd string, baseWin map[string][2]string, views *stateViews) [][]string {
	if end == "" || baseEnd == "" || end == baseEnd {
		return nil
	}
	for _, i := range idx {
		o := &tr.Ops[i]
		e := o.effect()
		if o.Parent != "" || o.served() != "" || e == nil || e.clErr != "" || o.StateError != "" || e.before == "" || e.before != e.after {
			return nil
		}
	}
	places, ok := changedPlaces(views.of(baseEnd), views.of(end))
	if !ok || len(places) == 0 {
		return nil
	}
	// The repeats of other ops and identities whose windows changed the
	// state: each a call that executed after another of its op and
	// identity (by the order they began in).
	type repeat struct {
		o      *Operation
		wb, wa *stateView
	}
	var repeats []repeat
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.Kind != KindWrite || o.Replayed || o.Name == op && o.Identity == id || o.StateError != "" || o.Status != StatusSuccess && !landed(o) {
			continue
		}
		e := o.effect()
		if e == nil || e.clErr != "" || e.before == "" || e.after == "" || e.before == e.after || e.order == 0 {
			continue
		}
		if !slices.ContainsFunc(tr.Ops, func(f Operation) bool {
			fe := f.effect()
			return f.Name == o.Name && f.Identity == o.Identity && f.Kind == KindWrite && !f.Replayed &&
				(f.Status == StatusSuccess || landed(&f)) && fe != nil && fe.order != 0 && fe.order < e.order
		}) {
			continue // the first execution of its op and identity
		}
		wb, wa := views.of(e.before), views.of(e.after)
		if wb == nil || wa == nil {
			continue
		}
		repeats = append(repeats, repeat{o, wb, wa})
	}
	// changedInBase says a window of op in the baseline changed p.
	changedInBase := func(name string, p place) bool {
		for wk, w := range baseWin {
			if o, _, _ := strings.Cut(wk, "\x00"); o != name || w[0] == "" || w[1] == "" || w[0] == w[1] {
				continue
			}
			if b, a := views.of(w[0]), views.of(w[1]); b != nil && a != nil && !sameValue(b.at(p), a.at(p)) {
				return true
			}
		}
		return false
	}
	by := make([][]string, 0, len(places))
	for _, p := range places {
		var ops []string
		for _, r := range repeats {
			if sameValue(r.wb.at(p), r.wa.at(p)) || !changedInBase(r.o.Name, p) || slices.Contains(ops, r.o.Name) {
				continue
			}
			ops = append(ops, r.o.Name)
		}
		if len(ops) == 0 {
			return nil
		}
		slices.Sort(ops) // the same on every run
		by = append(by, ops)
	}
	return by
}

// unchangedBesideNote says, in the trace, why repeat id of op was absorbed
// though the run did not end as the baseline did: every place where the
// ends differ was changed in the windows of the repeats of the ops by.
func unchangedBesideNote(op, id string, by []string) string {
	return fmt.Sprintf("%s (a repeat of %s) was absorbed: no execution of %s changed the state, here or in the baseline, in its window or after it, and nothing of the world was at work (no goroutine that Setup left running was running or asleep) when the baseline's end was read; the run did not end as the baseline did, but only at places that a repeat of %s changed in its own window, as a window of %s did in the baseline, and that repeat is counted: the difference is its own, and a write that sets what is already there changes nothing, and its repeat is no second effect", id, op, op, strings.Join(by, " or "), strings.Join(by, " or "))
}

// unchangedBesideBusyNote says why repeat id of op was not judged: as
// unchangedBesideNote, but a goroutine of the world was at work (at where)
// when the baseline's end was read, or the baseline's end was not read
// once it held still, and an effect landing later cannot be ruled out.
func unchangedBesideBusyNote(op, id, where string, places [][]string) string {
	var by []string
	for _, ops := range places {
		for _, op := range ops {
			if !slices.Contains(by, op) {
				by = append(by, op)
			}
		}
	}
	slices.Sort(by)
	why := "the baseline's end was not read once it held still with the world's goroutines at rest"
	if where != "" {
		why = "a goroutine that Setup started was at work at " + where + " when the baseline's end was read"
	}
	return fmt.Sprintf("%s (a repeat of %s) was not judged: no execution of %s changed the state, here or in the baseline, in its window or after it, and the run's end differs from the baseline's only at places which the windows of repeats of %s changed, as windows of theirs did in the baseline; but %s: an effect of %s that lands later than the end (a worker's, after its next poll) cannot be seen, in one execution or in two; give a Settle that waits for that work (testkit.SettleUntil), or, if a repeat of %s truly changes nothing (a set to the value it has), declare it idempotent", id, op, op, strings.Join(by, " or "), why, op, op)
}

// besideRepeat is a repeat absorbed although the run did not end as the
// baseline did (endChangedByOthers): tr.Ops[i], for each place where the
// ends differ the ops whose repeats changed it (places).
type besideRepeat struct {
	i      int
	places [][]string
}

// besideJudged notes the repeats absorbed beside other ops' repeats, once
// every repeat of the run is judged: the end's difference is accounted
// for where, at each place, a repeat of one of the ops that changed it
// was counted (a duplicate_write, or a wrong idempotent declaration,
// which says what it changed). Where none was (each was absorbed or
// taken as an update, by rules of its own), nothing the run reports
// accounts for the difference: the repeat is left unjudged, and the
// scenario inconclusive, with a note, rather than absorbed beside a
// difference that no finding names.
func besideJudged(tr *Trace, beside []besideRepeat) {
	noted := map[string]bool{}
	for _, b := range beside {
		o := &tr.Ops[b.i]
		var by, all []string // the ops counted, and all that changed a place
		counted := true
		for _, ops := range b.places {
			found := false
			for _, op := range ops {
				if !slices.Contains(all, op) {
					all = append(all, op)
				}
				if slices.ContainsFunc(tr.Ops, func(c Operation) bool { return c.Name == op && c.Repeat == RepeatDuplicate }) {
					found = true
					if !slices.Contains(by, op) {
						by = append(by, op)
					}
				}
			}
			counted = counted && found
		}
		slices.Sort(by)
		slices.Sort(all)
		if !counted {
			o.Repeat, o.JudgedBy = "", ""
			tr.unsettled = true
		}
		if noted[o.Name+"\x00"+o.Identity] {
			continue
		}
		noted[o.Name+"\x00"+o.Identity] = true
		if counted {
			tr.Notes = append(tr.Notes, unchangedBesideNote(o.Name, o.ID, by))
		} else {
			tr.Notes = append(tr.Notes, fmt.Sprintf("%s (a repeat of %s) was not judged: no execution of %s changed the state, here or in the baseline, in its window or after it, but the run did not end as the baseline did, and where it differs the state was changed in the windows of repeats of %s, none of them counted there: no finding accounts for the difference, and the suite cannot tell whether %s set a second effect going that landed there; give a Settle that waits for the world's work (testkit.SettleUntil), or, if a repeat of %s truly changes nothing (a set to the value it has), declare it idempotent", o.ID, o.Name, o.Name, strings.Join(all, " or "), o.Name, o.Name))
		}
	}
}
