package runtime

import (
	"fmt"
	"strconv"
	"strings"
)

// A goroutine that repeats one call on a ticker (a heartbeat that extends
// a lease, the agent never stops it) makes as many calls as the run takes
// ticks: two in one baseline, one in the next scenario. A fault planned on
// the second tick did not fire in runs that ticked once, and the correct
// agent's suite was inconclusive in 1 to 3 runs of 10 (red team rX, a
// heartbeat's idempotent put every 5 ms). Such a call is the same call as
// its first (same op, site, arguments and delivery) and, with State, was
// seen to change nothing in a window of its own: its faults are planned on
// the first only, which stands for the rest, and the report says so
// (sameCalls). A call whose window changed the state keeps its own: a tool
// that answers its failure as data (a 404 in its result, the call a
// success) is called again the same way once the model opened what it
// lacked, and that second call made the effect
// (TestErrorAsDataFirstLeavesLaterDuplicatesCaught). So does every call of
// a suite without State, and one that overlapped other writes (no window
// of its own).

// sameAsEarlier returns the baseline's earlier call that write i repeats
// at the same site with the same arguments and identity in the same
// delivery, both having succeeded, where i's own window showed no change
// (see above), or nil. (A call after one that failed
// by itself is a retry, whose success the faults that follow one need:
// failedInBaseline.) Calls through a framework's adapter share its line
// (viaAdapter), which says nothing of the agent's site, and are left
// alone, as are calls with no site.
func sameAsEarlier(base *Trace, i int) *Operation {
	o := &base.Ops[i]
	if o.Kind != KindWrite || o.Site == "" || o.viaAdapter || o.Status != StatusSuccess || !o.stateSeen() || o.StateChange != "" || o.StateError != "" {
		return nil
	}
	var key string
	for j := range i {
		p := &base.Ops[j]
		if p.Name != o.Name || p.Kind != KindWrite || p.Site != o.Site || p.Invocation != o.Invocation || p.Identity != o.Identity || p.viaAdapter || p.Status != StatusSuccess {
			continue
		}
		if key == "" {
			key = argsKey(o)
		}
		if argsKey(p) == key {
			return p
		}
	}
	return nil
}

// sameCalls returns the baseline's writes that repeat an earlier call
// (sameAsEarlier), each by its target ("put#2") with the note that says
// why it has no fault of its own, and those notes, one per first call.
func sameCalls(base *Trace) (byTarget map[string]string, notes []string) {
	var firsts []string
	again := map[string][]string{}
	for i := range base.Ops {
		p := sameAsEarlier(base, i)
		if p == nil {
			continue
		}
		// p is the earliest call i repeats (sameAsEarlier looks from the
		// start), the first of them all.
		first := p.Name + "#" + strconv.Itoa(p.Occurrence)
		if again[first] == nil {
			firsts = append(firsts, first)
		}
		again[first] = append(again[first], base.Ops[i].Name+"#"+strconv.Itoa(base.Ops[i].Occurrence))
	}
	for _, first := range firsts {
		n := fmt.Sprintf("no fault was planned on %s: each repeats %s at the same site with the same arguments, in the same delivery (a heartbeat's ticks, a loop's identical calls), and how many such calls a run makes can follow the clock, so a fault planned on a later one may not fire; %s's scenarios stand for them",
			strings.Join(again[first], ", "), first, first)
		notes = append(notes, n)
		if byTarget == nil {
			byTarget = map[string]string{}
		}
		for _, t := range again[first] {
			byTarget[t] = n
		}
	}
	return byTarget, notes
}
