package runtime

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A write that changed nothing, anywhere, ever. A set to the value a row
// already has (a GORM upsert of stock 40 over stock 40, PUT of the same
// document) changes the state in no window of its own, here or in the
// baseline, and the state holds what it sets: its arguments, in one object
// (restatedIn). Counted by executions, a correct agent was a duplicate_write
// in every scenario that repeats it (red team rtT #4, four scenarios of
// six on every run), while the same agent setting 50 was SAFE. Effects,
// not executions: where State saw no execution of the op change the
// world, in its window or after it (no change outside every traced write,
// in this run or in the baseline), the state held what the call sets, the
// run ended as the baseline did, and
// nothing of the world was at work that could land an effect later (no
// goroutine Setup left running, or none running or asleep when the
// baseline's end, held still, was read), the repeat did nothing, and is
// absorbed. Where a goroutine of the world was at work, an effect landing
// after the end cannot be ruled out: the repeat is not judged, and the
// scenario is inconclusive with a note that says so (before: a
// duplicate_write that said no effect was seen). A call whose arguments
// the state does not hold (an alert mailed to m-1, the mails not in State)
// may have an effect State cannot see, and still counts, with the finding
// that says no effect was seen.

// neverChanged reports whether no execution of op for identity id changed
// the state: in this run (the calls idx of tr, alone, or in a cluster of
// calls, which says nothing of its own), in the baseline (its windows of the op and identity, one at
// least), and outside every traced write in either (no gaps: each end is
// the state the last window closed on).
func neverChanged(tr *Trace, idx []int, op, id string, base *Trace, baseWin map[string][2]string) bool {
	if base == nil || base.end == "" || len(tr.gaps) > 0 || len(base.gaps) > 0 {
		return false
	}
	for _, i := range idx {
		o := &tr.Ops[i]
		switch {
		case o.StateError != "":
			return false
		case o.stateSeen() && o.StateChange == "":
		case o.Overlapped && clusterTaken(o):
			// Its cluster's change may be the other calls' (a payment
			// recorded beside the upsert): the end decides, which must
			// be the baseline's (judgeRepeatsIn).
		default:
			return false
		}
	}
	prefix := op + "\x00" + id + "\x00"
	seen := false
	for wk, w := range baseWin {
		if !strings.HasPrefix(wk, prefix) {
			continue
		}
		if w[0] == "" || w[1] == "" || w[0] != w[1] {
			return false
		}
		seen = true
	}
	return seen
}

// restatedIn reports whether the state (encoded) already holds, in one
// object, every value o sets: each string and number of its arguments,
// but those of its identity, is a key of that object or a value directly
// in it, or a string part of one of its keys or of the key it stands
// under (stock {"sku": "sku-1", "qty": 40} for set_stock("sku-1", 40),
// identity sku; a profile {"plan": "pro", "tz": "UTC"} for
// set_profile("u1", {plan: pro, tz: UTC}), identity u1). Such a call sets
// what is there. A call that sets no value beside its identity, or one
// the state does not hold (an alert mailed to m-1, the mails not in
// State), may have an effect State cannot see, and still counts.
func restatedIn(state string, o *Operation) bool {
	args, err := decodeState(argsKey(o))
	if err != nil {
		return false
	}
	// The values it sets: its arguments but those that name the thing
	// (its identity), which State may show otherwise or not at all (the
	// user u1 of a hash "profile:u1" read as "profile").
	named := map[string]int{}
	if id, err := decodeState(o.Identity); err == nil {
		leaves(id, func(x any) { named[encode(x)]++ })
	}
	var want []any
	leaves(args, func(x any) {
		switch x.(type) {
		case string, json.Number:
			if k := encode(x); named[k] > 0 {
				named[k]--
				return
			}
			want = append(want, x)
		}
	})
	if len(want) == 0 {
		return false // nothing it sets that State could hold (an alert to m-1)
	}
	v, err := decodeState(state)
	if err != nil {
		return false
	}
	// in says whether x is a key or a value directly in m, or, for a
	// string, part of a key of m or of the key m stands under (a Redis
	// hash "profile:u1" for the user u1).
	in := func(x any, m map[string]any, under string) bool {
		str, isStr := x.(string)
		for k, e := range m {
			if isStr && (k == str || len(str) > 1 && strings.Contains(k, str)) {
				return true
			}
			switch e.(type) {
			case map[string]any, []any:
			default:
				if equalValues(e, x) {
					return true
				}
			}
		}
		return isStr && len(str) > 1 && strings.Contains(under, str)
	}
	var walk func(v any, under string) bool
	walk = func(v any, under string) bool {
		switch x := v.(type) {
		case map[string]any:
			all := true
			for _, w := range want {
				if all = in(w, x, under); !all {
					break
				}
			}
			if all {
				return true
			}
			for k, e := range x {
				if walk(e, k) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(e, under) {
					return true
				}
			}
		}
		return false
	}
	return walk(v, "")
}

// worldAtRest reports whether, in the baseline, nothing of the world could
// land an effect after its end was read: Setup left no goroutine running,
// or its end held still and none of those goroutines was running or
// asleep then (worldAtWork); where one was, where says at what.
func worldAtRest(base *Trace) (rest bool, where string) {
	if !base.worldLive {
		return true, ""
	}
	r := base.odd()
	if !base.endStill || !r.baseLooked {
		return false, "" // not looked at
	}
	return r.baseBusy == "", r.baseBusy
}

// worldMayLand returns where, when the baseline's end was read, a
// goroutine that Setup left running was at work (running, asleep) or,
// running the user's code, blocked (a poller between polls): what may
// land an effect after the end. "" when none was, or none was looked at.
func worldMayLand(base *Trace) string {
	if !base.worldLive || base.rare == nil || !base.odd().baseLooked {
		return ""
	}
	if r := base.odd(); r.baseBusy != "" {
		return r.baseBusy
	}
	return base.odd().baseParked
}

// unchangedNote says, in the trace, why repeat id of op was absorbed
// though no execution of op was seen to change the world.
func unchangedNote(op, id string) string {
	return fmt.Sprintf("%s (a repeat of %s) was absorbed: no execution of %s changed the state, here or in the baseline, in its window or after it, the run ended as the baseline did, and nothing of the world was at work (no goroutine that Setup left running was running or asleep) when the baseline's end was read: a write that sets what is already there changes nothing, and its repeat is no second effect", id, op, op)
}

// unchangedBusyNote says why repeat id of op was not judged: as
// unchangedNote, but a goroutine of the world was at work (at where) when
// the baseline's end was read, or the baseline's end was not read once it
// held still, and an effect landing later cannot be ruled out.
func unchangedBusyNote(op, id, where string) string {
	why := "the baseline's end was not read once it held still with the world's goroutines at rest"
	if where != "" {
		why = "a goroutine that Setup started was at work at " + where + " when the baseline's end was read"
	}
	return fmt.Sprintf("%s (a repeat of %s) was not judged: no execution of %s changed the state, here or in the baseline, in its window or after it, and the run ended as the baseline did, but %s: an effect of %s that lands later than the end (a worker's, after its next poll) cannot be seen, in one execution or in two; give a Settle that waits for that work (testkit.SettleUntil), or, if a repeat of %s truly changes nothing (a set to the value it has), declare it idempotent", id, op, op, why, op, op)
}

// deficitOnly reports whether a cluster that began where one execution
// began (before, the baseline's w0) left less than that execution's
// change and nothing else: every place where the cluster's after differs
// from the execution's after (w1) is one the execution changed, and there
// the cluster's after holds what the execution found (w0): the change had
// not landed (a worker of the world's that had not yet carried out what
// the calls queued), which never shows a second effect. A quiet cluster
// (before == after) where one execution changed something is one.
//
// Only where one execution's change added members and changed nothing
// else: where it changed values, a cluster that holds the values it
// started with may be two changes that undid each other (a swap of two
// tickets' subjects, done twice), a duplicate.
func deficitOnly(w0, w1, before, after string, views *stateViews) bool {
	if w0 == w1 || before != w0 {
		return false
	}
	v0, v1, va := views.of(w0), views.of(w1), views.of(after)
	if v0 == nil || v1 == nil || va == nil || !onlyAdded(v0, v1) {
		return false
	}
	if before == after {
		return true
	}
	diff, ok := changedPlaces(va, v1)
	if !ok {
		return false
	}
	for _, p := range diff {
		if va.at(p) != v0.at(p) {
			return false
		}
	}
	return true
}

// onlyAdded reports whether b differs from a only by members added: list
// entries (listRises) or keys that a lacks.
func onlyAdded(a, b *stateView) bool {
	places, ok := changedPlaces(a, b)
	if !ok || len(places) == 0 {
		return false
	}
	for _, p := range places {
		if _, ok := listRises([]place{p}, a, b); ok {
			continue
		}
		if coll, _, added, ok := member(p, a, b); !ok || !added || coll == "" && len(p.path) == 0 {
			return false
		}
	}
	return true
}

// deficitNote says why repeat id of op, in a cluster that left less than
// one execution's change, was not judged.
func deficitNote(op, id, first, change string) string {
	return fmt.Sprintf("%s (a repeat of %s, overlapping %s) was not judged: the calls together left less than one execution of %s left in the baseline (%s), and the run did not end as the baseline did: the effect had not landed when the state was read (a worker that Setup started, carrying out what the calls queued, slower than in the baseline), and a state with less than one delivery's effect never shows a second; give a Settle that waits for that work (testkit.SettleUntil) for the suite to judge the repeat", id, op, first, op, change)
}

// oneMoreCopy reports whether the run's end holds, beside everything the
// baseline's end holds, one more copy of what one execution of the op
// added in the baseline and nothing else: the places where the ends
// differ are list entries, each risen by as many as one baseline window
// (w) added of it, and that window added no other entry and changed
// nothing else. A second refund of the same order and amount, which the
// consumer of a queue booked after the repeat's window closed, is such a
// copy; the repeat that queued it made a second effect.
func oneMoreCopy(baseEnd, end string, w [2]string, views *stateViews) bool {
	if baseEnd == "" || end == "" || baseEnd == end || w[0] == "" || w[1] == "" || w[0] == w[1] {
		return false
	}
	b0, b1 := views.of(w[0]), views.of(w[1])
	eb, ee := views.of(baseEnd), views.of(end)
	if b0 == nil || b1 == nil || eb == nil || ee == nil {
		return false
	}
	winPlaces, ok1 := changedPlaces(b0, b1)
	endPlaces, ok2 := changedPlaces(eb, ee)
	if !ok1 || !ok2 {
		return false
	}
	added, ok1 := listRises(winPlaces, b0, b1)
	again, ok2 := listRises(endPlaces, eb, ee)
	if !ok1 || !ok2 || len(added) == 0 || len(added) != len(again) {
		return false
	}
	for k, n := range added {
		if again[k] != n {
			return false
		}
	}
	return true
}

// listRises returns, for places changed from a to b, how many more times
// b holds each list entry (keyed by the list's path and the entry), and
// false where a place is no list, or a list lost an entry: a change that
// only added entries to lists.
func listRises(places []place, a, b *stateView) (map[string]int, bool) {
	out := map[string]int{}
	for _, p := range places {
		if p.elem {
			na, err1 := strconv.Atoi(a.at(p))
			nb, err2 := strconv.Atoi(b.at(p))
			if err1 != nil || err2 != nil || nb <= na {
				return nil, false
			}
			out[pathKey(p.path)+"\x02"+p.entry] = nb - na
			continue
		}
		// A list that was empty or missing, and now holds entries.
		lb, ok := b.value(p.path).([]any)
		if !ok {
			return nil, false
		}
		if va := a.value(p.path); va != nil {
			if la, ok := va.([]any); !ok || len(la) > 0 {
				return nil, false
			}
		}
		for e, n := range entryCounts(lb) {
			out[pathKey(p.path)+"\x02"+e] = n
		}
	}
	return out, true
}

// soleWrite reports whether the baseline executed one write, and one
// only: what its state became from that write's window on is all that
// write's doing, and its world's.
func soleWrite(base *Trace) bool {
	n := 0
	for i := range base.Ops {
		if o := &base.Ops[i]; o.Kind == KindWrite && !o.Replayed && o.Status == StatusSuccess && o.Parent == "" {
			n++
		}
	}
	return n == 1
}

// copyNote says why a repeat whose window held nothing is a duplicate:
// the end held one more copy of what one execution added.
func copyNote(first string) string {
	return fmt.Sprintf("its own window held nothing, but the run's end, read once it held still, holds one more copy of what one execution of the call added in the baseline, beside all the baseline's end holds: a second effect that the world (a worker that Setup started) carried out after the repeat's window closed, as the first execution's (%s) was", first)
}
