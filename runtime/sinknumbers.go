package runtime

import (
	"encoding/json"
	"maps"
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
// where it names a row the write that answered it made: in that write's
// window one list gained a row with it as its id (orders: 25 in the run's,
// 1 in the baseline's), and it is renamed as that list's rows' id and as
// the value of a key that reads as a reference to it (order_id, orderId),
// in the states compared, and in
// a call's arguments and identity where the call passed it under such a
// parameter (numbersInBaseKey), to find the baseline's call. A count, a
// quantity, an amount or a reference to another table keeps its number
// whatever it equals, so a visit counted twice is 2 against the
// baseline's 1 still. A first version renamed by key alone, and a second
// red team (/tmp/rt32) passed two duplicates with it: a stage advanced
// twice, read back as 7 by both deliveries (paired with the baseline's 6:
// stage_id reads as a reference), and an assignee given twice, 2 beside
// the run's order 2; a third (/tmp/rt33) passed a cursor moved on twice
// with a version that took the table from the ends.

// sinkNumbers pairs the whole numbers the sink answered this run (run) as
// names with those it answered the baseline (base), the run's text to the
// baseline's, each with its table: what the successful write calls of one
// op, identity and arguments answered as a whole (create_order's id) or
// under a key that reads as an id (a row's "id", an "order_id"), one call
// in the baseline and, in the run, every call of the key answering the
// same number, where the answering calls' windows gained a row of one list
// by those numbers (madeTables). Nil when nothing pairs, or the pairs are
// not one to one.
func sinkNumbers(run, base *Trace) numberNames {
	pairs := pairedNumbers(run, base)
	if len(pairs) == 0 {
		return nil
	}
	// Each pair names a row the answering call made, of one table: the
	// list that gained a row with the run's number as its id in the
	// window of a write of the run that answered it, and a row with the
	// baseline's in the window of the baseline's write that answered it.
	// A number a write answered that names no row it made is no name the
	// sink gave that write, and is left as it is: a stage the order moved
	// to, read back after the update (red team, /tmp/rt32 p1: read back as
	// 7 by both deliveries, it was read as the baseline's 6), or a cursor's
	// job read back after it moved (/tmp/rt33 p2: the job 30 the cursor
	// moved to twice was read as the baseline's 1, the job the baseline's
	// moved it to). And where the ends number a row of two lists alike
	// (an order and its one line, their counters in step), the window
	// says which the write made (/tmp/rt33 c1).
	out := numberNames{}
	for x, y := range pairs {
		var table []string
		ty := madeTables(base, y)
		for _, t := range madeTables(run, x) {
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

// madeTables returns the keys, lowered, of the lists that gained a row
// whose id is n in the window of a successful write of tr that answered n
// (the whole answer, or any number of it).
func madeTables(tr *Trace, n string) []string {
	var out []string
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.Kind != KindWrite || o.Status != StatusSuccess || o.Result == nil || o.effect() == nil {
			continue
		}
		c, err := Canonical(o.Result)
		if err != nil || !slices.Contains(numberTokens(c), n) {
			continue
		}
		before, after := o.stateWindow()
		bv, errB := decodeState(before)
		av, errA := decodeState(after)
		if errB != nil || errA != nil {
			continue
		}
		had := rowTables(bv, n)
		for _, t := range rowTables(av, n) {
			if !slices.Contains(had, t) && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// numberTokens returns the number tokens of JSON text s.
func numberTokens(s string) []string {
	var out []string
	scanNumbers(s, func(n, _ string) (string, bool) {
		out = append(out, n)
		return "", false
	})
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
// (refTarget: order_id names an order) names a row of table: the table is
// the target's name, singular or plural (orders, addresses, categories),
// after a prefix of its own (u_orders, order_items for item_id), and the
// target may have one (current_order_id names an order). A name that only
// holds the target (ship_id, shipments; tag_id, stages) names none of its
// rows (red team, /tmp/rt33 p1: strings.Contains took a rotation's ship_id
// of 2 for the run's shipment 2).
func readsAsRowOf(table, target string) bool {
	if target == "" {
		return false
	}
	if namesTable(table, target) {
		return true
	}
	i := strings.LastIndexByte(target, '_')
	return i > 0 && namesTable(table, target[i+1:])
}

// namesTable reports whether table is the plural or the name of thing,
// whole or after an underscore, or a plural of four letters or more after
// any prefix (korders, shoporders, outbox_events for event_id): regular
// plurals, and the irregular ones a schema uses (people for person_id: red
// team, /tmp/rt33 C5). A table named korders held the run's order 20, and
// klines.order_id kept 20 where one execution's lines were under the
// baseline's 1: a duplicate_write of a correct agent on every run (red
// team rtP #3). A name that only holds the thing's plural further in
// (ships in shipments) is still none of its rows.
func namesTable(table, thing string) bool {
	forms := []string{thing, thing + "s", thing + "es"}
	if y, ok := strings.CutSuffix(thing, "y"); ok {
		forms = append(forms, y+"ies")
	}
	if p, ok := irregularPlurals[thing]; ok {
		forms = append(forms, p)
	}
	for _, ending := range [][2]string{{"f", "ves"}, {"fe", "ves"}, {"is", "es"}, {"ex", "ices"}, {"ix", "ices"}, {"on", "a"}, {"um", "a"}, {"us", "i"}} {
		if stem, ok := strings.CutSuffix(thing, ending[0]); ok && stem != "" {
			forms = append(forms, stem+ending[1])
		}
	}
	for _, f := range forms {
		if table == f || strings.HasSuffix(table, "_"+f) || f != thing && len(f) >= 4 && strings.HasSuffix(table, f) {
			return true
		}
	}
	return false
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
					// The row's own number, or, named for another
					// table (a note's one number, its order_id), a
					// reference to that table's rows.
					target := refTarget(k)
					of = func(t string) bool { return t == table || target != "" && readsAsRowOf(t, target) }
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

// numbersInBaseKeys returns key (an op's name, identity and arguments, as
// windows writes them) with the whole numbers that rename maps read in the
// baseline's where they stand as names: an argument under a parameter that
// idParam reads as an id (order_id, orderID), and, in the identity, a
// number passed under such a parameter (the identity [25,"apple"] of
// add_line(orderID 25, sku apple, qty 2)). A quantity keeps its number,
// also where the identity holds it: the call looked up is then the
// baseline's with the same quantity. Where the identity holds a number
// more times than the arguments pass it under id parameters (the identity
// [2,"apple",2] of add_line(order_id 2, sku apple, qty 2)), which of them
// is the id the identity does not say: each choice is a key, the
// identity's first such number renamed first (red team, /tmp/rt33 P4:
// the run's order 2 and the quantity 2 both read as order 1 matched no
// call of the baseline, and the upsert was counted as a second effect).
// Key alone where nothing is renamed.
func numbersInBaseKeys(key string, rename numberNames) []string {
	if len(rename) == 0 {
		return []string{key}
	}
	parts := strings.SplitN(key, "\x00", 3)
	if len(parts) != 3 {
		return []string{key}
	}
	op := strings.ToLower(parts[0])
	ids := map[string]int{} // the numbers renamed, and how many times the arguments pass each under an id
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
		ids[n]++
		return y.to, true
	})
	if len(ids) == 0 {
		return []string{key}
	}
	// The identity's places that hold a renamed number, by number.
	places := map[string][]int{}
	at := 0
	scanNumbers(parts[1], func(n, _ string) (string, bool) {
		if ids[n] > 0 {
			places[n] = append(places[n], at)
		}
		at++
		return "", false
	})
	// choices: sets of places to rename, every number's places taken as
	// many at a time as the arguments pass it under ids (all of them
	// where the identity holds it no more often), up to maxKeyChoices.
	choices := []map[int]bool{{}}
	for _, n := range slices.Sorted(maps.Keys(places)) {
		ps := places[n]
		var next []map[int]bool
		for _, pick := range combinations(len(ps), min(ids[n], len(ps))) {
			for _, c := range choices {
				if len(next) == maxKeyChoices {
					break
				}
				c2 := maps.Clone(c)
				for _, i := range pick {
					c2[ps[i]] = true
				}
				next = append(next, c2)
			}
		}
		choices = next
	}
	keys := make([]string, 0, len(choices))
	for _, c := range choices {
		at := 0
		id := scanNumbers(parts[1], func(n, _ string) (string, bool) {
			rn := c[at]
			at++
			if rn {
				return rename[n].to, true
			}
			return "", false
		})
		keys = append(keys, parts[0]+"\x00"+id+"\x00"+args)
	}
	return keys
}

// maxKeyChoices bounds the keys numbersInBaseKeys tries for one call.
const maxKeyChoices = 16

// combinations returns the ways to pick k of n places, in order, the
// first places first.
func combinations(n, k int) [][]int {
	var out [][]int
	var pick func(from int, cur []int)
	pick = func(from int, cur []int) {
		if len(out) == maxKeyChoices {
			return
		}
		if len(cur) == k {
			out = append(out, slices.Clone(cur))
			return
		}
		for i := from; i <= n-(k-len(cur)); i++ {
			pick(i+1, append(cur, i))
		}
	}
	pick(0, nil)
	return out
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

// irregularPlurals are the plurals of things a table may hold that no
// ending rule of namesTable gives.
var irregularPlurals = map[string]string{
	"person": "people", "child": "children", "man": "men", "woman": "women",
	"mouse": "mice", "goose": "geese", "foot": "feet", "tooth": "teeth", "ox": "oxen",
}
