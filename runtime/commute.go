package runtime

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

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
// replaced by a note on the trace of the first schedule that showed it
// (every schedule that shows it holds one). Otherwise (one order never
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
	var end string
	for i, res := range runs {
		if res.Trace == nil || res.Inconclusive {
			same = false
			break
		}
		e := res.Trace.end
		if i == 0 {
			end = e
		} else if res.Outcome != runs[0].Outcome && !s.outcomesSame(runs[0], res) || e != end && !s.sameWorld(e, res.Trace, end, runs[0].Trace) {
			same = false // the order changed something
			break
		}
	}
	var noted map[string]bool // the pairs whose note is written, on their first schedule
	for _, h := range held {
		res, f := h.res, h.f
		if len(f.Calls) == 2 && len(f.Ops) == 2 && len(f.Identities) == 1 && same {
			if n, ok := bothOrdersRan(runs, res.Trace, f.Calls[0], f.Calls[1]); ok {
				if noted[orderKey(f)] {
					continue
				}
				if noted == nil {
					noted = map[string]bool{}
				}
				noted[orderKey(f)] = true
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

// sameWorld reports whether two schedules' end states a and b (of traces
// ta and tb) are one world: the same up to what no order of the calls
// chose. The moments the two runs' clocks stamped and no call was given
// (a row's created_at the database set) are left out, and the names the
// sink hands out to what the calls made (an INTEGER PRIMARY KEY numbering
// three lines added at once, in the order they landed), with a list of
// such rows compared in any order, its order being the numbering's
// (sameUpToMadeNames, names made by the calls of the baseline seen
// alone). A moment a call was given (a due date each) and a name the agent
// passed stay: the one to land last is what stays. An Outcome, where
// given, is compared as it is.
func (s *Suite) sameWorld(a string, ta *Trace, b string, tb *Trace) bool {
	if a == "" || b == "" || s.base == nil {
		return false
	}
	named := namedOutsideReferences(ta)
	for n := range namedOutsideReferences(tb) {
		named[n] = true
	}
	if holdsClock(a) || holdsClock(b) {
		a, b = withoutClocks(a, named), withoutClocks(b, named)
		if a == b {
			return true
		}
	}
	// And the tokens each run's sink drew that no call was given or
	// answered (freshTokens: a tag's api_token DEFAULT md5(random())),
	// read in b's: two tags added at once were concurrent writes on
	// every run, each schedule's rows holding tokens of their own.
	if rn := freshTokens(a, b, tokenTexts(ta, tb)); rn != nil {
		if r, n := renamedState(a, rn), normState(b); r == n || n != "" && sameUpToOrder(r, n) {
			return true
		}
	}
	// The baseline ran the listed order; its end is the one whose names
	// the calls seen alone made as they are.
	base := s.base.end
	if base == "" {
		return false
	}
	if holdsClock(base) {
		base = withoutClocks(base, named)
	}
	ws := slices.Collect(maps.Values(windows(s.base)))
	for i, w := range ws {
		if holdsClock(w[0]) || holdsClock(w[1]) {
			ws[i] = [2]string{withoutClocks(w[0], named), withoutClocks(w[1], named)}
		}
	}
	made := madeBy(ws)
	alike := func(e string) bool { return e == base || sameUpToRenaming(e, base, made, named) }
	return alike(a) && alike(b)
}

// namedOutsideReferences is namedIn less the texts the calls of tr were
// given only as references to a member of some collection, under a
// parameter that reads as one (order_id, orderId: refTarget), and the
// numbers given only under a parameter that is no id (a quantity, an
// amount): add_line's order 1 and quantity 2 name no line the table
// numbered 1 or 2 beside them. A text also given under another parameter
// stays named, as do strings (a ticket T-1 given as ticket) and what an
// identity holds beside the arguments. What such a name meant is still
// compared: the rows are compared by all they hold, and a number held
// elsewhere in the state keeps the ends apart (sameUpToRenaming).
func namedOutsideReferences(tr *Trace) map[string]bool {
	named := namedIn(tr)
	refs, plain := map[string]bool{}, map[string]bool{}
	for i := range tr.Ops {
		o := &tr.Ops[i]
		for j, v := range o.Args.Values {
			d, err := decodeState(encode(v))
			if err != nil {
				continue
			}
			t, ok := scalarText(d)
			if !ok {
				continue
			}
			name := ""
			if j < len(o.Args.Names) {
				name = o.Args.Names[j]
			}
			_, number := d.(json.Number)
			switch {
			case refTarget(name) != "":
				refs[t] = true
			case number && nowWindow().epochLike(t):
				plain[t] = true // a moment the call was given: it stays
			case number && name != "" && !strings.EqualFold(name, "id"):
				refs[t] = true // a value, not a name
			default:
				plain[t] = true
			}
		}
	}
	for t := range refs {
		if !plain[t] {
			delete(named, t)
		}
	}
	return named
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
