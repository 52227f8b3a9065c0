package runtime

import "fmt"

// heldFinding is a finding of a scheduled run held back until the
// exploration ends.
type heldFinding struct {
	res *Result
	f   Finding
}

// commutingWrites settles the concurrent_writes_same_entity findings that
// record held back, where State is given. The finding says that two writes
// to one entity were in flight together, so that what stays depends on
// which lands last. Where every schedule run ended in the same world
// (State's end snapshot as taken, and Outcome's value where given), and
// each of the two calls started last in one of them and finished last in
// one, the exploration disproved it: two tags added to one post, two
// counters of one row incremented, writes that commute. It is then
// replaced by a note on its schedule's trace. Otherwise (one order never
// ran, as under a PCT budget; two schedules ended differently; a schedule
// was inconclusive) it is given back to its schedule's result, which
// testkit prints as it prints what the exploration adds after a schedule
// was reported (order_variant_outcome). Without State it is never held:
// an Outcome may leave out the field the two calls race on.
func (s *Suite) commutingWrites() {
	held := s.commuting
	s.commuting = nil
	if len(held) == 0 {
		return
	}
	runs := s.scheduledResults
	same := true
	var end, outcome string
	for i, res := range runs {
		if res.Trace == nil || res.Inconclusive {
			same = false
			break
		}
		// Compared as taken, moments and all: a moment is what two
		// calls may have set (a due date each), and the one to land
		// last is what stays.
		e := res.Trace.end
		if i == 0 {
			end, outcome = e, res.Outcome
		} else if e != end || res.Outcome != outcome {
			same = false // the order changed something
			break
		}
	}
	for _, h := range held {
		res, f := h.res, h.f
		if len(f.Calls) == 2 && len(f.Ops) == 2 && len(f.Identities) == 1 && same {
			if n, ok := bothOrdersRan(runs, res.Trace, f.Calls[0], f.Calls[1]); ok {
				res.Trace.Notes = append(res.Trace.Notes, fmt.Sprintf("%s and %s wrote entity %s while both in flight; in the %d schedules run, each of them started last in some and finished last in some, and all ended in the same world: they commute, so which lands last does not matter", f.Ops[0], f.Ops[1], f.Identities[0], n))
				continue
			}
		}
		res.Findings = append(res.Findings, f)
		if f.Severity == SeverityError {
			res.Safe = false
		}
	}
}

// bothOrdersRan reports whether, among the scheduled runs where both
// completed, each of the two calls a and b of trace tr started last in one
// and finished last in one, and how many runs there are. A call is found in
// another run by its op, identity and arguments: calls are numbered as
// their gates open, so the same number may name the other call there.
func bothOrdersRan(runs []*Result, tr *Trace, a, b string) (int, bool) {
	oa, ob := traceOp(tr, a), traceOp(tr, b)
	if oa == nil || ob == nil {
		return 0, false
	}
	ka, kb := opKey(oa), opKey(ob)
	if ka == kb {
		return 0, false // two executions of one call: not told apart across runs
	}
	// Each call must have started last in some run and finished last in
	// some run: a scheduled call's tool body runs before the next call is
	// started, so the start order is the order of the effects, and the
	// finish order the one in which the agent saw the answers.
	var aStart, bStart, aEnd, bEnd bool
	for _, res := range runs {
		var x, y *Operation
		for i := range res.Trace.Ops {
			switch o := &res.Trace.Ops[i]; opKey(o) {
			case ka:
				x = o
			case kb:
				y = o
			}
		}
		if x == nil || y == nil || x.StartTick == 0 || y.StartTick == 0 || x.EndTick == 0 || y.EndTick == 0 {
			continue
		}
		aStart, bStart = aStart || x.StartTick > y.StartTick, bStart || y.StartTick > x.StartTick
		aEnd, bEnd = aEnd || x.EndTick > y.EndTick, bEnd || y.EndTick > x.EndTick
	}
	return len(runs), aStart && bStart && aEnd && bEnd
}

// opKey names a call by what it did, not by its number in the run.
func opKey(o *Operation) string {
	return o.Name + "\x00" + o.Identity + "\x00" + argsKey(o)
}
