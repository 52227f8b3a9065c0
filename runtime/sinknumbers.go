package runtime

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Numbers the sink answered. A table whose ids come from a counter that
// Setup does not reset (SQLite's AUTOINCREMENT after DELETE, a PostgreSQL
// sequence) numbers the order a correct agent upserts 25 in a scenario and
// 1 in the baseline; create_order answers it, and the agent writes the
// order's lines under order_id 25. Two deliveries at once of add_line then
// leave a line under order 25 where one execution in the baseline left it
// under order 1, and every comparison with one execution saw a change of
// its own (red team, SQLite, /tmp/rt20c TestOrders/select/delete: a
// duplicate_write on every run).
//
// sinkRenaming reads such names in the baseline's for text (a UUID), and
// leaves numbers out on purpose: renaming 2 to 1 wherever it stands also
// turned a visit count of 2 into 1, and a real duplicate passed
// (TestACountEqualToARenamedIDIsNoName). A number is renamed here only
// where it names a row of its table: it must be the id of a row of one
// list in both ends (orders: 25 in the run's, 1 in the baseline's), and it
// is renamed as that list's rows' id and as the value of a key that reads
// as a reference to it (order_id, orderId), in the states compared, and in
// a call's arguments and identity where the call passed it under such a
// parameter (numbersInBaseKey), to find the baseline's call. A count, a
// quantity, an amount or a reference to another table keeps its number
// whatever it equals, so a visit counted twice is 2 against the
// baseline's 1 still. A first version renamed by key alone, and a second
// red team (/tmp/rt32) passed two duplicates with it: a stage advanced
// twice, read back as 7 by both deliveries (paired with the baseline's 6:
// stage_id reads as a reference), and an assignee given twice, 2 beside
// the run's order 2.

// sinkNumbers pairs the whole numbers the sink answered this run (run) as
// names with those it answered the baseline (base), the run's text to the
// baseline's, each with its table: what the successful write calls of one
// op, identity and arguments answered as a whole (create_order's id) or
// under a key that reads as an id (a row's "id", an "order_id"), one call
// in the baseline and, in the run, every call of the key answering the
// same number, where one list numbers a row by it in the run's end (end)
// and by the baseline's in the baseline's (baseEnd). Nil when nothing
// pairs, or the pairs are not one to one.
func sinkNumbers(run, base *Trace, end, baseEnd string) numberNames {
	pairs := pairedNumbers(run, base)
	if len(pairs) == 0 {
		return nil
	}
	// Each pair names a row of one table: the list whose rows hold the
	// run's number as their id in the run's end, and the baseline's in
	// the baseline's. A number a write answered that names no row made
	// there (a stage the order moved to, read back after the update) is
	// no name the sink gave, and is left as it is (red team, /tmp/rt32
	// p1: a stage advanced twice, read back as 7 by both deliveries,
	// was read as the baseline's 6).
	ev, errE := decodeState(end)
	bv, errB := decodeState(baseEnd)
	if errE != nil || errB != nil {
		return nil
	}
	out := numberNames{}
	for x, y := range pairs {
		// The one table that numbers a row x in the run's end and a row
		// y in the baseline's (the baseline's first line is row 1 too).
		var table []string
		ty := rowTables(bv, y)
		for _, t := range rowTables(ev, x) {
			if slices.Contains(ty, t) && !slices.Contains(table, t) {
				table = append(table, t)
			}
		}
		if len(table) != 1 {
			continue
		}
		out[x] = numberName{to: y, table: table[0]}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// numberNames maps the whole numbers the sink answered this run to the
// baseline's, each with the table (the key of the list of rows) whose row
// it is the id of.
type numberNames map[string]numberName

type numberName struct{ to, table string }

// rowTables returns the keys, lowered, of the lists in state v whose rows
// (objects) have n as their id (idKey), at any depth.
func rowTables(v any, n string) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if l, ok := e.([]any); ok {
					for _, r := range l {
						if m, ok := r.(map[string]any); ok {
							if id, ok := m[idKey(m)].(json.Number); ok && id.String() == n {
								out = append(out, strings.ToLower(k))
								break
							}
						}
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// readsAsRowOf reports whether a key that reads as a reference to target
// (refTarget: order_id names an order) names a row of table (orders,
// u_orders), as refersTo reads such keys.
func readsAsRowOf(table, target string) bool {
	return target != "" && strings.Contains(table, target)
}

// pairedNumbers pairs the whole numbers the sink answered this run with
// the baseline's (see sinkNumbers), unscoped.
func pairedNumbers(run, base *Trace) map[string]string {
	rb := writeResults(base)
	if len(rb) == 0 {
		return nil
	}
	to, from := map[string]string{}, map[string]string{}
	for i := range run.Ops {
		o := &run.Ops[i]
		if o.Kind != KindWrite || o.Status != StatusSuccess || o.Result == nil {
			continue
		}
		y, ok := rb[opKey(o)]
		if !ok {
			continue
		}
		c, err := Canonical(o.Result)
		if err != nil {
			continue
		}
		x, err := decodeState(c)
		if err != nil {
			continue
		}
		if !pairNumbers(x, y, true, to, from) {
			return nil
		}
	}
	for x, y := range to {
		if x == y {
			delete(to, x) // a number kept is no renaming
		}
	}
	if len(to) == 0 {
		return nil
	}
	return to
}

// pairNumbers walks two answers in step and pairs, in to and from, the
// whole numbers that differ where they stand as names (named: the answer
// itself, or a member under a key that idParam reads as an id); false
// when a number would pair with two. Answers of other shapes pair nothing.
func pairNumbers(x, y any, named bool, to, from map[string]string) bool {
	switch xv := x.(type) {
	case json.Number:
		yv, ok := y.(json.Number)
		if !named || !ok || !wholeNumber(xv) || !wholeNumber(yv) {
			return true
		}
		a, b := xv.String(), yv.String()
		if t, ok := to[a]; ok && t != b {
			return false
		}
		if f, ok := from[b]; ok && f != a {
			return false
		}
		to[a], from[b] = b, a
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok {
			return true
		}
		for k, e := range xv {
			if f, ok := yv[k]; ok && !pairNumbers(e, f, idParam(k), to, from) {
				return false
			}
		}
	case []any:
		// The rows of a list answered (the order with its lines) are
		// walked for their ids; a list of bare numbers is no name.
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return true
		}
		for i := range xv {
			if _, row := xv[i].(map[string]any); row && !pairNumbers(xv[i], yv[i], false, to, from) {
				return false
			}
		}
	}
	return true
}

// numbersInBaseNames returns snapshot s (the run's) with the whole numbers
// that rename maps read in the baseline's, as encode writes it, only where
// they stand as names of a row of their table: as the id of a row in the
// list of that table, or as the value of a member whose key reads as a
// reference to it (order_id, for orders). False where s does not decode,
// or where it holds at such a place a number that the renaming gives
// another (the baseline's 1, where the run has an order 1 of its own and
// does not rename it): two rows would then share a name. So the renaming
// is one to one on the table's names, and a count, a quantity or a
// reference to another table (an assignee_id equal to the run's order
// number: red team, /tmp/rt32 p4) is never touched.
func numbersInBaseNames(s string, rename numberNames) (string, bool) {
	v, err := decodeState(s)
	if err != nil {
		return "", false
	}
	taken := make(map[string]string, len(rename)) // the baseline's numbers, with their tables
	for _, y := range rename {
		taken[y.to] = y.table
	}
	ok := true
	var walk func(v any, table string) any
	walk = func(v any, table string) any {
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			idk := idKey(x)
			for k, e := range x {
				n, num := e.(json.Number)
				if !num {
					if _, list := e.([]any); list {
						out[k] = walk(e, strings.ToLower(k))
					} else {
						out[k] = walk(e, "")
					}
					continue
				}
				var of func(t string) bool // whether the member names a row of table t
				switch {
				case k == idk && table != "":
					of = func(t string) bool { return t == table }
				case refTarget(k) != "":
					target := refTarget(k)
					of = func(t string) bool { return readsAsRowOf(t, target) }
				default:
					out[k] = e
					continue
				}
				if y, renamed := rename[n.String()]; renamed && of(y.table) {
					out[k] = json.Number(y.to)
					continue
				}
				if t, held := taken[n.String()]; held && of(t) {
					ok = false
				}
				out[k] = e
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e, table)
			}
			return out
		}
		return v
	}
	out := encode(walk(v, ""))
	return out, ok
}

// numbersInBaseKey returns key (an op's name, identity and arguments, as
// windows writes them) with the whole numbers that rename maps read in the
// baseline's where they stand as names: an argument under a parameter that
// idParam reads as an id (order_id, orderID), and, in the identity, a
// number passed under such a parameter (the identity [25,"apple"] of
// add_line(orderID 25, sku apple, qty 2)). A quantity keeps its number,
// also where the identity holds it: the call looked up is then the
// baseline's with the same quantity. Key itself where nothing is renamed.
func numbersInBaseKey(key string, rename numberNames) string {
	if len(rename) == 0 {
		return key
	}
	parts := strings.SplitN(key, "\x00", 3)
	if len(parts) != 3 {
		return key
	}
	op := strings.ToLower(parts[0])
	ids := map[string]bool{}
	args := scanNumbers(parts[2], func(n, member string) (string, bool) {
		y, ok := rename[n]
		if !ok || member == "" {
			return "", false
		}
		// order_id names an order; a bare id, the row of the op's own
		// table (submit_order's id).
		t := refTarget(member)
		if strings.EqualFold(member, "id") {
			t = strings.TrimSuffix(y.table, "s")
			if !strings.Contains(op, t) {
				return "", false
			}
		}
		if !readsAsRowOf(y.table, t) {
			return "", false
		}
		ids[n] = true
		return y.to, true
	})
	if len(ids) == 0 {
		return key
	}
	id := scanNumbers(parts[1], func(n, _ string) (string, bool) {
		if ids[n] {
			return rename[n].to, true
		}
		return "", false
	})
	return parts[0] + "\x00" + id + "\x00" + args
}

// scanNumbers returns JSON text s with each number token that f renames
// replaced, f given the token and, for the value of an object's member,
// the member's key ("" elsewhere). Nothing else of s changes, the order of
// an object's members included, as a key is compared byte for byte.
func scanNumbers(s string, f func(n, member string) (string, bool)) string {
	var b strings.Builder
	member, key := "", "" // the member whose value comes next; the last string read
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return s // not JSON
			}
			j++
			b.WriteString(s[i:j])
			key, member = s[i:j], ""
			i = j
		case c == ':':
			if k, err := strconv.Unquote(key); err == nil {
				member = k
			}
			b.WriteByte(c)
			i++
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && strings.IndexByte("0123456789.eE+-", s[j]) >= 0 {
				j++
			}
			if y, ok := f(s[i:j], member); ok {
				b.WriteString(y)
			} else {
				b.WriteString(s[i:j])
			}
			member = ""
			i = j
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			b.WriteByte(c)
			i++
		default:
			member = ""
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}
