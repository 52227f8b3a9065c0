package runtime

import (
	"encoding/json"
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
// where it stands as a name: as the value of a member whose key reads as
// an id or a reference to one (id, order_id, orderId: idParam), in the
// answer the number was paired from and in the states compared, and in a
// call's arguments and identity where the call passed it under such a
// parameter (numbersInBaseKey), to find the baseline's call. A count,
// a quantity or an amount keeps its number whatever it equals, so a visit
// counted twice is 2 against the baseline's 1 still.

// sinkNumbers pairs the whole numbers the sink answered this run (run) as
// names with those it answered the baseline (base), the run's text to the
// baseline's: what the successful write calls of one op, identity and
// arguments answered as a whole (create_order's id) or under a key that
// reads as an id (a row's "id", an "order_id"), one call in the baseline
// and, in the run, every call of the key answering the same number. Nil
// when nothing pairs, or the pairs are not one to one.
func sinkNumbers(run, base *Trace) map[string]string {
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
// they stand as names: as the value of a member whose key reads as an id
// or a reference (idParam). False where s does not decode, or where it
// holds at such a place a number that the renaming gives another (the
// baseline's 1, where the run has a row 1 of its own and does not rename
// it): two members would then share a name. So the renaming is one to one
// on the state's names, and a count or a quantity is never touched.
func numbersInBaseNames(s string, rename map[string]string) (string, bool) {
	v, err := decodeState(s)
	if err != nil {
		return "", false
	}
	taken := make(map[string]bool, len(rename))
	for _, y := range rename {
		taken[y] = true
	}
	ok := true
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				if n, num := e.(json.Number); num && idParam(k) {
					if y, renamed := rename[n.String()]; renamed {
						out[k] = json.Number(y)
						continue
					}
					if taken[n.String()] {
						ok = false
					}
					out[k] = e
					continue
				}
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e)
			}
			return out
		}
		return v
	}
	out := encode(walk(v))
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
func numbersInBaseKey(key string, rename map[string]string) string {
	if len(rename) == 0 {
		return key
	}
	parts := strings.SplitN(key, "\x00", 3)
	if len(parts) != 3 {
		return key
	}
	ids := map[string]bool{}
	args := scanNumbers(parts[2], func(n, member string) (string, bool) {
		y, ok := rename[n]
		if ok && member != "" && idParam(member) {
			ids[n] = true
			return y, true
		}
		return "", false
	})
	if len(ids) == 0 {
		return key
	}
	id := scanNumbers(parts[1], func(n, _ string) (string, bool) {
		if ids[n] {
			return rename[n], true
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
