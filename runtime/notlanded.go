package runtime

import (
	"fmt"
	"reflect"
)

// endBeforeTheWorld reports whether the end of a run (end) differs from
// the baseline's end only where the baseline's world changed by itself
// after its agent returned (from base.returned to base.end: an order its
// service confirmed 40 ms after the commit), and holds there what the
// baseline held when its agent returned: the run's end was read before the
// world's own change landed in it (its service took 90 ms this time, more
// than twice the baseline's), not after a second effect. Such an end says
// nothing of how many effects stayed. Counted as a duplicate, a correct
// transactional agent failed whenever the world's delay varied that much
// between two runs (review of 461f5c3); passed, a duplicate landing as
// late would pass with it: the repeat is left unjudged (judgeRepeatsIn).
func endBeforeTheWorld(end string, base *Trace, views *stateViews) bool {
	if base == nil || end == "" || base.returned == "" || base.end == "" || base.returned == base.end || end == base.end {
		return false
	}
	run, ret, last := views.of(end), views.of(base.returned), views.of(base.end)
	if run == nil || ret == nil || last == nil {
		return false
	}
	landed, changed := worldLanded(run.v, ret.v, last.v)
	return changed && reflect.DeepEqual(landed, last.v)
}

// worldLanded returns run with the baseline's own changes landed in it:
// where ret (the baseline's state when its agent returned) and last (its
// end) differ, and run holds ret's value (or lacks a key ret lacked), the
// value of last; changed says something was put in. Maps are walked key
// by key; any other value (a list, a scalar) is taken whole.
func worldLanded(run, ret, last any) (out any, changed bool) {
	if reflect.DeepEqual(ret, last) {
		return run, false
	}
	rm, ok1 := run.(map[string]any)
	bm, ok2 := ret.(map[string]any)
	em, ok3 := last.(map[string]any)
	if !ok1 || !ok2 || !ok3 {
		if reflect.DeepEqual(run, ret) {
			return last, true
		}
		return run, false
	}
	m := make(map[string]any, len(rm)+len(em))
	for k, v := range rm {
		m[k] = v
	}
	for k, ev := range em {
		rv, inRun := rm[k]
		bv, inRet := bm[k]
		switch {
		case inRun && inRet:
			if v, c := worldLanded(rv, bv, ev); c {
				m[k], changed = v, true
			}
		case !inRun && !inRet:
			m[k], changed = ev, true // added by the world after the return
		}
	}
	for k, bv := range bm {
		if _, inLast := em[k]; !inLast {
			if rv, inRun := rm[k]; inRun && reflect.DeepEqual(rv, bv) {
				delete(m, k) // removed by the world after the return
				changed = true
			}
		}
	}
	return m, changed
}

// beforeTheWorldNote says why the repeat id of op was not judged.
func beforeTheWorldNote(op, id string) string {
	return fmt.Sprintf("%s (a repeat of %s) was not judged: no call of %s changed the state in its own window, and this run's end differs from the baseline's only where the world changed by itself after the baseline's agent returned, holding what the baseline held then: the world's own change (a service confirming the order) had not landed in this run when its end held still, so the end cannot say whether a second effect stayed; give a Settle that waits for the world to go quiet (testkit.SettleUntil)", id, op, op)
}
