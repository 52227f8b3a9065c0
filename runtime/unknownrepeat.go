package runtime

import (
	"fmt"
	"slices"
	"strings"
)

// A write whose identity could not be computed (identity_panicked,
// identity_unencodable, identity_missing) is invisible to duplicate
// detection: the baseline's finding says so, once per suite. A scenario
// after it that executed such a write more often than the baseline did (a
// crash's restart, a redelivery) repeated it with no identity to judge the
// repeat by, and read "ok, nothing to note" (red team rtV #17). It is
// inconclusive now, with a note naming the op and why.

// unknownRepeats marks res inconclusive where tr executed a write of unknown
// identity more often than the baseline did.
func (s *Suite) unknownRepeats(res *Result, tr *Trace, sc Scenario) {
	if sc.Kind == ScenarioBaseline || s.base == nil {
		return
	}
	count := func(t *Trace) (map[string]int, map[string]string) {
		n, why := map[string]int{}, map[string]string{}
		for i := range t.Ops {
			o := &t.Ops[i]
			if o.Kind != KindWrite || o.IdentityError == "" || o.Replayed {
				continue
			}
			// The tool ran: it succeeded, or its answer was lost.
			if o.Status == StatusSuccess || o.Fault == FaultLostAck || o.Fault == FaultCrash {
				n[o.Name]++
				if why[o.Name] == "" {
					why[o.Name] = o.IdentityError
				}
			}
		}
		return n, why
	}
	base, _ := count(s.base)
	here, why := count(tr)
	var ops []string
	for op, k := range here {
		if k > base[op] {
			ops = append(ops, op)
		}
	}
	slices.Sort(ops)
	for _, op := range ops {
		res.Inconclusive = true
		tr.Notes = append(tr.Notes, fmt.Sprintf("%s was executed %d times here with an unknown identity (%s), %d in the baseline: with no identity, the suite cannot tell whether the repeat was a second effect, so this scenario proves nothing about it; make the identity expression work for every call (see the baseline's finding)",
			op, here[op], strings.TrimSuffix(why[op], "."), base[op]))
	}
}
