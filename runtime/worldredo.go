package runtime

import "slices"

// A repeat of a write declared idempotent that made again the very change
// an earlier execution made (redo.redo), from the very state that one
// started from, is no sign the declaration is wrong: an upsert sets what
// it set. It was judged by the end at the places it changed. But where
// the world itself, outside every traced write and between the two, took
// what the earlier execution made and acted on it (a worker that credits
// a queued job and deletes its row), the repeat made it again and the
// world acted again: an enqueue keyed by ON CONFLICT DO NOTHING, whose
// worker deletes done jobs, credited the account twice, and passed in 6
// to 10 runs of 10 (red team rW #1, declared idempotent), its jobs table
// at the end what one delivery left. Such a repeat is judged by the end
// at the places the world changed in between as well, where the
// baseline's world changed them after the op's execution too (its
// reaction to the op, not a clock of its own): the credit made twice.

// worldRedid returns the places, other than the repeat's own (r.places),
// that the world changed in run tr outside every traced write, between
// the execution the repeat redid (r.redoOrder) and the repeat, in changes
// that took what that execution made (every place the repeat then changed
// was changed so), and again after the repeat began, and that the
// baseline's world (base) changed too, outside its traced writes, after
// an execution of the op began: where the world acted on each of the
// two. Nil where there are none. A clock of the world's (a heartbeat
// slower than the look, settledbeat.go) may meet all of that by chance,
// in a run of three beats at the right moments.
func worldRedid(tr, base *Trace, o *Operation, r *redo, views *stateViews) []place {
	if base == nil || r.redo == "" || r.redoOrder == 0 || len(tr.gaps) == 0 || len(tr.odd().gapsAt) != len(tr.gaps) ||
		len(base.gaps) == 0 || len(base.odd().gapsAt) != len(base.gaps) {
		return nil
	}
	var between, later []place
	for g, gap := range tr.gaps {
		if gap[0] == gap[1] {
			continue
		}
		switch at := tr.odd().gapsAt[g]; {
		case at > r.redoOrder && at <= o.execOrder():
			// Only a change that took the earlier effect: what a clock
			// of the world's changed meanwhile is not its reaction.
			if ps := partsOf(gap[0], gap[1], views).places; meetsAny(r.places, ps) {
				between = append(between, ps...)
			}
		case at > o.execOrder():
			later = append(later, partsOf(gap[0], gap[1], views).places...)
		}
	}
	for _, p := range r.places {
		if !meetsAny([]place{p}, between) {
			return nil // the world did not take the earlier effect
		}
	}
	first := 0
	for i := range base.Ops {
		if b := &base.Ops[i]; b.Kind == KindWrite && b.Name == o.Name && b.Identity == o.Identity && b.execOrder() != 0 && (first == 0 || b.execOrder() < first) {
			first = b.execOrder()
		}
	}
	if first == 0 {
		return nil
	}
	var after []place
	for g, gap := range base.gaps {
		if base.odd().gapsAt[g] > first && gap[0] != gap[1] {
			after = append(after, partsOf(gap[0], gap[1], views).places...)
		}
	}
	var extra []place
	for _, q := range between {
		if meetsAny([]place{q}, r.places) || slices.ContainsFunc(extra, func(p place) bool { return p.key() == q.key() }) {
			continue
		}
		if meetsAny([]place{q}, after) && meetsAny([]place{q}, later) {
			extra = append(extra, q)
		}
	}
	return extra
}

// meetsAny reports whether a place of ps meets a place of qs (placesMeet).
func meetsAny(ps, qs []place) bool {
	return slices.ContainsFunc(ps, func(p place) bool {
		return slices.ContainsFunc(qs, func(q place) bool { return placesMeet(p, q) })
	})
}
