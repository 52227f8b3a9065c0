package runtime

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Writes that State saw do nothing, where the baseline's did. A tool whose
// client is made once (sync.Once, a package-level handle) binds to the
// world of the first Setup that ran, and every later scenario's calls
// change that world while State reads the one its own Setup made: each
// window there is unchanged, the repeats were absorbed as changing
// nothing, and lost_acknowledgement, crash_restart and both duplicate
// deliveries passed for the correct twin and the buggy one alike, though
// their ends lacked the ticket the baseline opened (red team rS #3,
// probe/once). A run whose writes took effect, each with State read
// around it and unchanged, that started where the baseline did and ended
// there, where the baseline's writes of the same ops changed the state in
// their windows, did nothing the suite can see: it is inconclusive, and
// its note names the likely cause.

// unseenWrites returns the note of run tr (not the baseline), whose end is
// end, when its traced writes changed nothing State sees where the
// baseline's changed it, and "" otherwise. alike compares two states as
// the end-state judging does.
func unseenWrites(tr, base *Trace, end string, alike func(e, b string) bool) string {
	if base == nil || end == "" || base.end == "" || alike(end, base.end) {
		return ""
	}
	start, baseStart := startOf(tr), startOf(base)
	if start == "" || baseStart == "" || start != baseStart && !alike(start, baseStart) {
		return ""
	}
	// This run's state ended where it started; the baseline's did not.
	if end != start && !alike(end, start) || base.end == baseStart || alike(base.end, baseStart) {
		return ""
	}
	// The writes that took effect, here and in the baseline, by op and
	// identity, in the order they began to run: the n-th call of one here
	// stands beside the baseline's n-th. Not by their arguments too: a
	// request id made afresh for each call kept every call apart from the
	// baseline's, and the rule never applied (red team rY). An attach
	// answered 404 as data changed nothing in the baseline too, and a
	// run whose agent gave up after it changed nothing the baseline's
	// first attach did not.
	ran := executedInOrder(tr)
	for _, o := range ran {
		if o.stateSeen() && o.StateChange == "" {
			continue
		}
		if e := o.effect(); o.Overlapped && e != nil && e.before != "" && quietCluster(o) {
			continue // State read around the calls it overlapped, unchanged
		}
		return ""
	}
	baseRan := executedInOrder(base)
	nth := map[string]int{}
	for _, o := range ran {
		k := o.Name + "\x00" + o.Identity
		n := nth[k]
		nth[k]++
		for _, b := range baseRan {
			if b.Name+"\x00"+b.Identity != k {
				continue
			}
			if n > 0 {
				n--
				continue
			}
			if !b.stateSeen() || b.StateChange == "" {
				break
			}
			ids := make([]string, 0, len(ran))
			for _, r := range ran {
				ids = append(ids, r.ID)
			}
			return fmt.Sprintf("no traced write of this run changed the state: each that ran (%s) had State read around it, or around the calls it overlapped, and saw nothing change, where the baseline's %s, the same call, changed it in its window (%s) from the same start, and this run ended where it started. The calls may reach a world other than the one State reads: a client, a connection or a cache made once (with sync.Once, or kept in a package variable) holds the world of the Setup that ran first, or what the calls did in it, and a later Setup's fresh world does not replace it; make the tool reach the world Setup makes (Setup resets the client too), or put what the calls change in State. The suite cannot judge this run, and the scenario is inconclusive (testkit.FailInconclusive fails the test on such a scenario)",
				strings.Join(ids, ", "), b.ID, b.StateChange)
		}
	}
	return ""
}

// executedInOrder lists the writes of t that took effect (not replayed,
// succeeded or landed), in the order they began to run, as effectsOf.
func executedInOrder(t *Trace) []*Operation {
	var ops []*Operation
	for i := range t.Ops {
		if o := &t.Ops[i]; o.Kind == KindWrite && !o.Replayed && (o.Status == StatusSuccess || landed(o)) {
			ops = append(ops, o)
		}
	}
	slices.SortStableFunc(ops, func(x, y *Operation) int {
		if c := cmp.Compare(x.execOrder(), y.execOrder()); c != 0 {
			return c
		}
		return cmp.Compare(x.Seq, y.Seq)
	})
	return ops
}
