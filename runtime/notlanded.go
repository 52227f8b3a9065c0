package runtime

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// The world's places are those where the baseline's state changed by
// itself after its agent returned, from base.returned to base.end (an order
// its service confirmed 40 ms after the commit, a heartbeat's counter).
// Two ends that differ there say nothing of the agent.

// endBeforeTheWorld reports whether the end of a run (end) holds, at every
// one of the world's places, what the baseline held when its agent returned,
// and is alike the baseline's end once the world's changes are put in: the
// run's end held still before the world's own change landed in it (its
// service took 90 ms this time, more than twice the baseline's), and says
// nothing of how many effects stayed. Counted as a duplicate, a correct
// transactional agent failed whenever the world's delay varied that much
// between two runs (review of 461f5c3); passed, a duplicate landing as late
// would pass with it: the repeat is left unjudged (judgeRepeatsIn). Where
// the world's change landed in part of the run's end (a capture service
// that set captured but not yet held), the end does speak, and is judged
// as it is (review of 1bec79b). Where it holds a state the baseline's world
// went through on its way (confirmed, then shipped; base.passed), it was
// read midway, and is left unjudged as well.
func endBeforeTheWorld(end string, base *Trace, views *stateViews, alike func(e, b string) bool) bool {
	if base == nil || end == "" || base.end == "" || end == base.end {
		return false
	}
	run, last := views.of(end), views.of(base.end)
	if run == nil || last == nil {
		return false
	}
	// The run's end may hold what the baseline held when its agent
	// returned, or any state its world went through on its way to its end
	// (confirmed, before shipped: the run's shipping took longer). Where
	// Setup left a goroutine running (worldLive), also a state the
	// baseline's world changed by itself from after a traced write
	// returned (worldStarts): a queue's worker that carries out what the
	// call queued 5 to 60 ms later, whose refund had landed when the
	// baseline's agent returned, had not when the run's end held still,
	// and the run's end, no refund at all, was counted as a second one
	// (red team rtR #9, #2).
	tried := map[string]bool{base.end: true, "": true}
	for _, mid := range append(append([]string{base.returned}, base.passed...), worldStarts(base)...) {
		if tried[mid] {
			continue
		}
		tried[mid] = true
		if m := views.of(mid); m != nil && noneLanded(run.v, m.v, last.v) && alikeEncoded(overwriteWorld(run.v, m.v, last.v), last.v, alike) {
			return true
		}
	}
	return false
}

// worldStarts returns, for a baseline whose Setup left a goroutine running
// (worldLive), the states its world changed from by itself after a traced
// write returned: the first state of each of its gaps (judge.gaps). An end
// that holds one of them, and so less than the baseline's end there, lacks
// what the world did in the baseline, and can never show a second effect.
func worldStarts(base *Trace) []string {
	if !base.worldLive {
		return nil
	}
	out := make([]string, 0, len(base.gaps))
	for _, g := range base.gaps {
		out = append(out, g[0])
	}
	return out
}

// differsWhereTheWorldDidNot reports whether a run whose end, or the
// baseline's, did not hold still still tells a second effect: with the
// world's places taken from the baseline's end, its end differs from the
// baseline's, and held so from when its agent returned (its state then,
// so taken, is alike its end). Such a difference is the agent's, settled
// before the world went on (a second payment committed next to a
// heartbeat, or while the world confirmed payments one by one): the
// repeat is judged by count, not left unjudged (review of 1bec79b).
func differsWhereTheWorldDidNot(tr *Trace, end string, base *Trace, views *stateViews, alike func(e, b string) bool) bool {
	if base == nil || end == "" || tr.returned == "" || base.returned == "" || base.end == "" {
		return false
	}
	run, runRet, ret, last := views.of(end), views.of(tr.returned), views.of(base.returned), views.of(base.end)
	if run == nil || runRet == nil || ret == nil || last == nil {
		return false
	}
	taken := overwriteWorld(run.v, ret.v, last.v)
	if alikeEncoded(taken, last.v, alike) {
		return false // it differs only where the world changed by itself
	}
	return alikeEncoded(overwriteWorld(runRet.v, ret.v, last.v), taken, alike)
}

// alikeEncoded compares two decoded states as end states (alike), in the
// encoding snapshots have.
func alikeEncoded(a, b any, alike func(e, b string) bool) bool {
	ea, err1 := json.Marshal(a)
	eb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && alike(string(ea), string(eb))
}

// overwriteWorld returns run with the world's places (where ret and last
// differ) holding last's values: keys the world added are put in, keys it
// removed taken out. Maps are walked key by key; any other value (a list,
// a scalar) is a place whole.
func overwriteWorld(run, ret, last any) any {
	if reflect.DeepEqual(ret, last) {
		return run
	}
	rm, ok1 := run.(map[string]any)
	bm, ok2 := ret.(map[string]any)
	em, ok3 := last.(map[string]any)
	if !ok1 || !ok2 || !ok3 {
		return last
	}
	m := make(map[string]any, len(rm)+len(em))
	for k, v := range rm {
		m[k] = v
	}
	for k, ev := range em {
		bv, inRet := bm[k]
		rv, inRun := rm[k]
		switch {
		case !inRet:
			m[k] = ev // added by the world
		case inRun:
			m[k] = overwriteWorld(rv, bv, ev)
		case !reflect.DeepEqual(bv, ev):
			m[k] = ev
		}
	}
	for k := range bm {
		if _, inLast := em[k]; !inLast {
			delete(m, k) // removed by the world
		}
	}
	return m
}

// noneLanded reports whether run holds, at every place where ret and last
// differ, what ret holds there: none of the world's changes is in it.
func noneLanded(run, ret, last any) bool {
	if reflect.DeepEqual(ret, last) {
		return true
	}
	rm, ok1 := run.(map[string]any)
	bm, ok2 := ret.(map[string]any)
	em, ok3 := last.(map[string]any)
	if !ok1 || !ok2 || !ok3 {
		return reflect.DeepEqual(run, ret)
	}
	for k, ev := range em {
		bv, inRet := bm[k]
		rv, inRun := rm[k]
		switch {
		case !inRet:
			if inRun {
				return false // the world's key is there
			}
		case !inRun:
			if !reflect.DeepEqual(bv, ev) {
				return false
			}
		case !noneLanded(rv, bv, ev):
			return false
		}
	}
	for k, bv := range bm {
		if _, inLast := em[k]; !inLast {
			if rv, inRun := rm[k]; !inRun || !reflect.DeepEqual(rv, bv) {
				return false // the world's removal is there
			}
		}
	}
	return true
}

// partWay reports whether mid is a state on the way from ret to last
// that the world may have passed through: at every place where ret and
// last differ, mid holds what one of them holds there (a mail sent, its
// receipt not yet), and elsewhere what both hold; and at least one of the
// changes is in it. Maps are walked key by key; any other value (a list,
// a scalar) is a place whole.
func partWay(mid, ret, last any) bool {
	some := false
	var walk func(mid, ret, last any) bool
	walk = func(mid, ret, last any) bool {
		if reflect.DeepEqual(ret, last) {
			return reflect.DeepEqual(mid, ret)
		}
		mm, ok1 := mid.(map[string]any)
		rm, ok2 := ret.(map[string]any)
		lm, ok3 := last.(map[string]any)
		if !ok1 || !ok2 || !ok3 {
			switch {
			case reflect.DeepEqual(mid, last):
				some = true
				return true
			default:
				return reflect.DeepEqual(mid, ret)
			}
		}
		keys := map[string]bool{}
		for _, m := range []map[string]any{mm, rm, lm} {
			for k := range m {
				keys[k] = true
			}
		}
		for k := range keys {
			mv, inMid := mm[k]
			rv, inRet := rm[k]
			lv, inLast := lm[k]
			switch {
			case inMid && inRet && inLast:
				if !walk(mv, rv, lv) {
					return false
				}
			case inMid == inRet && (!inMid || reflect.DeepEqual(mv, rv)):
				// as ret has it (absent, or equal)
			case inMid == inLast && (!inMid || reflect.DeepEqual(mv, lv)):
				some = true // as last has it
			default:
				return false
			}
		}
		return true
	}
	return walk(mid, ret, last) && some
}

// beforeTheWorldNote says why the repeat id of op was not judged.
func beforeTheWorldNote(op, id string) string {
	return fmt.Sprintf("%s (a repeat of %s) was not judged: no call of %s changed the state in its own window, and this run's end differs from the baseline's only where the world changed by itself after the baseline's agent returned, holding what the baseline held then: the world's own change (a service confirming the order) had not landed in this run when its end held still, so the end cannot say whether a second effect stayed; give a Settle that waits for the world to go quiet (testkit.SettleUntil)", id, op, op)
}
