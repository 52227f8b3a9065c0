package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxChange bounds a described change; the rest is elided.
const maxChange = 400

// DescribeChange says in words how the canonical JSON snapshot after differs
// from before, the way a person reads it:
//
//	notes: 1 → 2 entries, added "o9:called customer"
//	todos[0].done: false → true
//	entities: added key "bob"
//
// Lists that changed length are compared as collections (what was added,
// what removed); lists of one length and objects are compared element by
// element. It returns "" when the two are equal.
func DescribeChange(before, after string) string {
	return describeChange(before, after, maxChange)
}

// describeChange is DescribeChange cut at limit bytes (-1: whole).
func describeChange(before, after string, limit int) string {
	if before == after {
		return ""
	}
	a, errA := decodeState(before)
	b, errB := decodeState(after)
	if errA != nil || errB != nil {
		return fmt.Sprintf("state: %s → %s", clipIf(before, 80, limit), clipIf(after, 80, limit))
	}
	var parts []string
	diffValue("", a, b, &parts, limit >= 0)
	if len(parts) == 0 {
		return "state: changed"
	}
	s := strings.Join(parts, "; ")
	if limit < 0 {
		return s
	}
	return clip(s, limit)
}

func decodeState(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// diffValue appends the differences between a and b under path; short
// cuts long values, for reading (a comparison of changes wants them whole).
func diffValue(path string, a, b any, out *[]string, short bool) {
	cut := func(s string) string {
		if short {
			return clip(s, 80)
		}
		return s
	}
	name := path
	if name == "" {
		name = "state"
	}
	if !short {
		// For comparing changes: a collection that is absent (null) is
		// an empty one, so that adding an entry to an empty table reads
		// the same whether the snapshot held null or [].
		a, b = emptyFor(a, b), emptyFor(b, a)
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		var added, removed []string
		for _, k := range sorted {
			xv, inX := x[k]
			yv, inY := y[k]
			switch {
			case !inX && short:
				added = append(added, quote(k))
			case !short && (!inX && isCollection(yv) || !inY && isCollection(xv)):
				// For comparing changes: an absent collection (a
				// field left out when empty) is an empty one, as null.
				diffValue(join(path, k), xv, yv, out, short)
			case !inX:
				// Whole, for comparing changes: a key added with 1
				// (one increment) is not a key added with 2 (two).
				added = append(added, quote(k)+" = "+encode(yv))
			case !inY && short:
				removed = append(removed, quote(k))
			case !inY:
				removed = append(removed, quote(k)+" = "+encode(xv))
			default:
				diffValue(join(path, k), xv, yv, out, short)
			}
		}
		if len(added) > 0 || len(removed) > 0 {
			*out = append(*out, fmt.Sprintf("%s: %s", name, addedRemoved("key", added, removed)))
		}
		return
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		if len(x) == len(y) {
			for i := range x {
				diffValue(fmt.Sprintf("%s[%d]", name, i), x[i], y[i], out, short)
			}
			return
		}
		// A collection that grew or shrank: what is in one and not the
		// other, counted as a multiset.
		count := map[string]int{}
		for _, v := range x {
			count[encode(v)]++
		}
		var added, removed []string
		for _, v := range y {
			k := encode(v)
			if count[k] > 0 {
				count[k]--
				continue
			}
			added = append(added, cut(k))
		}
		for _, v := range x {
			k := encode(v)
			if count[k] > 0 {
				count[k]--
				removed = append(removed, cut(k))
			}
		}
		desc := fmt.Sprintf("%s: %d → %d %s", name, len(x), len(y), plural(len(y), "entry", "entries"))
		if !short {
			// For comparing changes: what was added and removed, not
			// the sizes, which count what other calls left there too
			// (one row added to an empty table or beside a sibling's
			// row is the same change).
			desc = name + ":"
		}
		if s := addedRemoved("", added, removed); s != "" {
			desc += ", " + s
		}
		*out = append(*out, desc)
		return
	default:
		if encode(a) == encode(b) {
			return
		}
	}
	if encode(a) != encode(b) {
		*out = append(*out, fmt.Sprintf("%s: %s → %s", name, cut(encode(a)), cut(encode(b))))
	}
}

// sameUpToOrder reports whether two snapshots hold the same values, with
// the entries of every list taken in any order. Two deliveries at once
// leave the rows of a table in another order than one delivery did (a
// SELECT without ORDER BY reads them in the order they were inserted):
// that is no repeat's doing.
func sameUpToOrder(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := decodeState(a)
	y, errB := decodeState(b)
	if errA != nil || errB != nil {
		return false
	}
	return encode(sortLists(x)) == encode(sortLists(y))
}

// reordersList reports whether snapshot b holds a list of snapshot a with
// the same entries in another order: a change that sameUpToOrder does not
// see, made by an op whose effect is an order (a job moved up a queue).
func reordersList(a, b string) bool {
	if a == b {
		return false
	}
	x, errA := decodeState(a)
	y, errB := decodeState(b)
	return errA == nil && errB == nil && reordered(x, y)
}

func reordered(a, b any) bool {
	return inLists(a, b, func(x, y []any) (yes, more bool) {
		if len(x) != len(y) || encode(x) == encode(y) {
			return false, false
		}
		if encode(sortLists(x)) == encode(sortLists(y)) {
			return true, false
		}
		return false, true
	})
}

// inLists walks two decoded snapshots in step, member by member, and
// reports whether list says yes of a pair of lists at one place; a pair it
// leaves open (more) is walked entry by entry where the two are of one
// length.
func inLists(a, b any, list func(x, y []any) (yes, more bool)) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for k, xv := range x {
			if yv, ok := y[k]; ok && inLists(xv, yv, list) {
				return true
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			return false
		}
		yes, more := list(x, y)
		if yes {
			return true
		}
		if more && len(x) == len(y) {
			for i := range x {
				if inLists(x[i], y[i], list) {
					return true
				}
			}
		}
	}
	return false
}

// movesEntries reports whether snapshot after holds an entry of a list
// of snapshot before, unchanged, at another place than before it: in a list
// of the same length, at another index (a job boosted past two others,
// which moved them down); where the list grew or shrank, in another order
// among the entries both hold. A change that edits an entry in place, or
// adds and removes entries, moves none. Where a change moves entries, their
// order is part of what it did, and comparisons that take lists in any
// order would hide a second execution that moved them further (red team,
// /tmp/rt36 q2: a priority queue listed by priority, a job boosted twice).
func movesEntries(before, after string) bool {
	if before == after {
		return false
	}
	a, errA := decodeState(before)
	b, errB := decodeState(after)
	return errA == nil && errB == nil && moved(a, b)
}

func moved(a, b any) bool {
	return inLists(a, b, func(x, y []any) (yes, more bool) {
		was := make(map[string]int, len(x))
		for _, e := range x {
			was[encode(e)]++
		}
		if len(x) == len(y) {
			for i := range y {
				if k := encode(y[i]); k != encode(x[i]) && was[k] > 0 {
					return true, false // an entry of before, unchanged, now at i
				}
			}
			return false, true
		}
		// The entries both hold, in each one's order.
		is := make(map[string]int, len(y))
		for _, e := range y {
			is[encode(e)]++
		}
		var xs, ys []string
		for _, e := range x {
			if k := encode(e); is[k] > 0 {
				is[k]--
				xs = append(xs, k)
			}
		}
		for _, e := range y {
			if k := encode(e); was[k] > 0 {
				was[k]--
				ys = append(ys, k)
			}
		}
		return !slices.Equal(xs, ys), false
	})
}

// sortedState returns snapshot s with the entries of every list sorted
// (sortLists), "" when it does not decode.
func sortedState(s string) string {
	v, err := decodeState(s)
	if err != nil {
		return ""
	}
	return encode(sortLists(v))
}

// sortLists returns v with the entries of every list sorted by their
// encoding.
func sortLists(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = sortLists(e)
		}
		return out
	case []any:
		keys := make([]string, len(x))
		for i, e := range x {
			keys[i] = encode(sortLists(e))
		}
		sort.Strings(keys)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = json.RawMessage(k)
		}
		return out
	}
	return v
}

func isCollection(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return true
	}
	return false
}

// emptyFor returns v, or, when v is null and other a collection, an empty
// collection of other's kind.
func emptyFor(v, other any) any {
	if v != nil {
		return v
	}
	switch other.(type) {
	case []any:
		return []any{}
	case map[string]any:
		return map[string]any{}
	}
	return v
}

func addedRemoved(what string, added, removed []string) string {
	var parts []string
	noun := func(n int) string {
		if what == "" {
			return ""
		}
		return plural(n, what, what+"s") + " "
	}
	if len(added) > 0 {
		parts = append(parts, "added "+noun(len(added))+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed "+noun(len(removed))+strings.Join(removed, ", "))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// join extends a path with a key, in dotted form when the key is a plain
// name.
func join(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			plain = false
		}
	}
	if !plain {
		key = "[" + quote(key) + "]"
		return path + key
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// encode writes a decoded value back as compact JSON (keys sorted).
func encode(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// clipIf clips s to n bytes unless limit says whole (negative).
func clipIf(s string, n, limit int) string {
	if limit < 0 {
		return s
	}
	return clip(s, n)
}

// clip cuts s to about n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func orNothing(s string) string {
	if s == "" {
		return "no change"
	}
	return s
}

// A place is one thing a change to a snapshot touched: the value at a path
// of object keys, or, in a list at that path, how many times one entry
// occurs (entries are counted, not indexed: a row inserted anywhere is the
// same row).
type place struct {
	path  []string
	entry string // the entry's encoding, when elem
	elem  bool
}

// key identifies the place: equal for one place, different otherwise.
func (p place) key() string {
	k := strings.Join(p.path, "\x01")
	if p.elem {
		k += "\x02" + p.entry
	}
	return k
}

// name is the place in words: its path, and its entry.
func (p place) name() string {
	path := ""
	for _, k := range p.path {
		if seg, ok := strings.CutPrefix(k, rowSegment); ok {
			_, key, _ := strings.Cut(seg, "\x00")
			path += "[" + key + "]"
			continue
		}
		path = join(path, k)
	}
	if path == "" {
		path = "state"
	}
	if p.elem {
		return path + " entry " + clip(p.entry, 80)
	}
	return path
}

// changedPlaces returns the places where snapshot b differs from snapshot
// a; false when either does not decode. A list whose entries only moved is
// one place, the whole list.
func changedPlaces(a, b *stateView) ([]place, bool) {
	if a == nil || b == nil {
		return nil, false
	}
	var out []place
	collectPlaces(nil, a.v, b.v, &out)
	// In a fixed order (maps are walked in any): what is said of the
	// first of them is the same on every run.
	slices.SortFunc(out, func(p, q place) int { return strings.Compare(p.key(), q.key()) })
	return out, true
}

func collectPlaces(path []string, a, b any, out *[]place) {
	a, b = emptyFor(a, b), emptyFor(b, a)
	if equalValues(a, b) {
		return
	}
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			for k, xv := range x {
				collectPlaces(append(slices.Clip(path), k), xv, y[k], out)
			}
			for k, yv := range y {
				if _, ok := x[k]; !ok {
					collectPlaces(append(slices.Clip(path), k), nil, yv, out)
				}
			}
			return
		}
	case []any:
		if y, ok := b.([]any); ok {
			n := len(*out)
			if len(x) <= 1 && len(y) <= 1 {
				// A list of one row (SELECT status ... WHERE id = ?)
				// is one value: its row changed, or came, or went.
				*out = append(*out, place{path: path})
				return
			}
			if col, rx, ry, ok := keyedRows(x, y); ok {
				// Rows keyed by a column (or id): a row whose other
				// columns changed is one place, as the value of a key
				// is.
				seg := rowSegment + strconv.Itoa(col) + "\x00"
				for k, xv := range rx {
					collectRow(append(slices.Clip(path), seg+k), xv, ry[k], out)
				}
				for k, yv := range ry {
					if _, ok := rx[k]; !ok {
						collectRow(append(slices.Clip(path), seg+k), nil, yv, out)
					}
				}
				if len(*out) == n { // the same rows in another order
					*out = append(*out, place{path: path})
				}
				return
			}
			cx, cy := entryCounts(x), entryCounts(y)
			for e, c := range cx {
				if cy[e] != c {
					*out = append(*out, place{path: path, entry: e, elem: true})
				}
			}
			for e := range cy {
				if _, ok := cx[e]; !ok {
					*out = append(*out, place{path: path, entry: e, elem: true})
				}
			}
			if len(*out) == n { // the same entries in another order
				*out = append(*out, place{path: path})
			}
			return
		}
	}
	*out = append(*out, place{path: path})
}

// collectRow adds the places where row a differs from row b: an object's
// fields one by one, a list (a tuple of columns) as a whole.
func collectRow(path []string, a, b any, out *[]place) {
	_, x := a.(map[string]any)
	_, y := b.(map[string]any)
	if x || y {
		collectPlaces(path, a, b, out)
		return
	}
	if !equalValues(a, b) {
		*out = append(*out, place{path: path})
	}
}

// rowSegment starts a path segment that names a row of a list by the
// column that keys it and its value there (keyedRows): rowSegment, the
// column (-1 for an object's id, idKey), NUL, the value's encoding.
const rowSegment = "\x00row\x00"

// keyedRows returns, for two versions of a list whose entries are rows
// (lists of columns, or objects with an id), the column that keys them
// and the rows of each by their key: a column whose values are strings,
// numbers or bools, unique within each list, and, among those, the one
// whose values the two lists share most (the id of a row whose status
// changed, not its status). Rows read from a table (SELECT id, status ...,
// or SELECT status, id ...) are keyed so; a list of anything else is a
// multiset of entries.
func keyedRows(x, y []any) (col int, rx, ry map[string]any, ok bool) {
	objects, width := true, -1
	for _, l := range [][]any{x, y} {
		for _, e := range l {
			switch r := e.(type) {
			case []any:
				objects = false
				if width < 0 || len(r) < width {
					width = len(r)
				}
			case map[string]any:
				if width >= 0 {
					return 0, nil, nil, false // lists and objects mixed
				}
			default:
				return 0, nil, nil, false
			}
		}
	}
	if objects {
		rx, okx := rowsBy(x, -1)
		ry, oky := rowsBy(y, -1)
		return -1, rx, ry, okx && oky
	}
	best, shared := -1, -1
	for c := 0; c < width; c++ {
		kx, okx := rowsBy(x, c)
		ky, oky := rowsBy(y, c)
		if !okx || !oky {
			continue
		}
		n := 0
		for k := range kx {
			if _, ok := ky[k]; ok {
				n++
			}
		}
		if n > shared {
			best, shared, rx, ry = c, n, kx, ky
		}
	}
	return best, rx, ry, best >= 0
}

// rowsBy returns the rows of l by their value in column col (-1: an
// object's id, idKey), when each has one, a string, number or bool, and no two
// share it.
func rowsBy(l []any, col int) (map[string]any, bool) {
	rows := make(map[string]any, len(l))
	for _, e := range l {
		k, ok := rowKey(e, col)
		if !ok {
			return nil, false
		}
		if _, dup := rows[k]; dup {
			return nil, false
		}
		rows[k] = e
	}
	return rows, true
}

// idKey returns the key of object r that names it: "id", or, where r has
// none, "ID" or "Id", as encoding/json writes the field ID of a Go struct
// with no json tag (a row scanned from SELECT id, ...). Where r has none
// of them, the one key named as a row's number (numberKey) whose value is
// a whole number: a table's BIGSERIAL primary key named for its table
// (tag_id, invoice_id, invoiceId), or a number column a sequence fills
// (an invoice's number, a seq). "" when r has none, or two such keys (a
// line's line_id beside its order_id: which names the row is not known).
func idKey(r map[string]any) string {
	for _, k := range [...]string{"id", "ID", "Id"} {
		if _, ok := r[k]; ok {
			return k
		}
	}
	found := ""
	for k, v := range r {
		n, ok := v.(json.Number)
		if !ok || !numberKey(k) || !wholeNumber(n) {
			continue
		}
		if found != "" {
			return ""
		}
		found = k
	}
	return found
}

// numberKey reports whether key k is named as the number of a row: ends
// in _id, Id or ID after a word of two letters or more (invoice_id,
// tagId), or is, or ends in, number, num, no, seq or serial (number,
// invoice_no, lineNumber). PostgreSQL's usual names for a sequence's
// column, which only "id" was before: a rolled back attempt that used up
// number 1 made the run's invoice number 2, and a duplicate_write, where
// the same table keyed by id was SAFE (red team, /tmp/rtM P2, P5). A count
// or an amount (quantity, cents, n) is never one.
func numberKey(k string) bool {
	if refTarget(k) != "" {
		return true
	}
	l := strings.ToLower(k)
	for _, w := range [...]string{"number", "num", "no", "seq", "serial"} {
		if l == w {
			return true
		}
		if t, ok := strings.CutSuffix(l, w); ok && len(t) >= 2 && (strings.HasSuffix(t, "_") || k[len(t)] >= 'A' && k[len(t)] <= 'Z') {
			return true
		}
	}
	return false
}

// rowKey returns the encoding of row e's value in column col (-1: an
// object's id, idKey), when it has one of a kind that can key a row.
func rowKey(e any, col int) (string, bool) {
	var k any
	switch r := e.(type) {
	case []any:
		if col < 0 || col >= len(r) {
			return "", false
		}
		k = r[col]
	case map[string]any:
		if col >= 0 {
			return "", false
		}
		k = r[idKey(r)]
	}
	switch k.(type) {
	case string, json.Number, bool:
		return encode(k), true
	}
	return "", false
}

// rowIndex returns the rows of list l by their value in column col: a
// row, or, where several share it (in a snapshot other than the two the
// column was chosen on), all of them in the order of their encoding, so
// that a row that changed is still told.
func rowIndex(l []any, col int) map[string]any {
	idx := make(map[string]any, len(l))
	var shared map[string]bool
	for _, e := range l {
		k, ok := rowKey(e, col)
		if !ok {
			continue
		}
		switch prev, dup := idx[k]; {
		case !dup:
			idx[k] = e
		case shared[k]:
			idx[k] = append(prev.([]any), e)
		default:
			if shared == nil {
				shared = map[string]bool{}
			}
			shared[k] = true
			idx[k] = []any{prev, e}
		}
	}
	for k := range shared {
		rows := idx[k].([]any)
		slices.SortFunc(rows, func(a, b any) int { return strings.Compare(encode(a), encode(b)) })
	}
	return idx
}

// equalValues reports whether two decoded values are equal, null being an
// empty list or object where the other is one.
func equalValues(a, b any) bool {
	a, b = emptyFor(a, b), emptyFor(b, a)
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalValues(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return encode(a) == encode(b)
}

func entryCounts(l []any) map[string]int {
	m := make(map[string]int, len(l))
	for _, e := range l {
		m[encode(e)]++
	}
	return m
}

// stateView is a decoded snapshot, read place by place: the entries of
// each list it was asked about are counted once.
type stateView struct {
	v      any
	counts map[string]map[string]int // by the path of a list
	rows   map[string]map[string]any // by the path of a list of rows and its key column (rowIndex)
}

// viewOf decodes snapshot s; nil when it does not decode.
func viewOf(s string) *stateView {
	v, err := decodeState(s)
	if err != nil {
		return nil
	}
	return &stateView{v: v}
}

// at returns what the snapshot holds at place p: the encoding of the value
// at its path ("null" where the path is missing), or how many times its
// entry occurs in the list there.
func (sv *stateView) at(p place) string {
	v := sv.value(p.path)
	if !p.elem {
		if v == nil {
			return "null"
		}
		return encode(v)
	}
	key := strings.Join(p.path, "\x00")
	c, ok := sv.counts[key]
	if !ok {
		l, _ := v.([]any)
		c = entryCounts(l)
		if sv.counts == nil {
			sv.counts = map[string]map[string]int{}
		}
		sv.counts[key] = c
	}
	return strconv.Itoa(c[p.entry])
}

// value returns the decoded value the snapshot holds at path, nil where
// the path is missing (at's "null"), without encoding it: a caller that
// asks only whether something is there (member, once for each place a
// change made, up the place's path) does not encode a whole collection
// each time. Through at, each of the 1,500 places changed in
// setsback_world_test.go's inbox encoded the whole inbox of both
// snapshots: quadratic, TestLargeInboxMarkedAgainIsAbsorbed took 287 s
// under -race on a loaded machine (0.8 s without -race); 22 s since.
func (sv *stateView) value(path []string) any {
	v := sv.v
	for i, k := range path {
		if seg, ok := strings.CutPrefix(k, rowSegment); ok {
			c, key, _ := strings.Cut(seg, "\x00")
			at := strings.Join(path[:i], "\x00") + "\x00" + c
			idx, ok := sv.rows[at]
			if !ok {
				col, _ := strconv.Atoi(c)
				l, _ := v.([]any)
				idx = rowIndex(l, col)
				if sv.rows == nil {
					sv.rows = map[string]map[string]any{}
				}
				sv.rows[at] = idx
			}
			v = idx[key]
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			v = nil
			break
		}
		v = m[k]
	}
	return v
}

// samePlaces reports whether snapshots a and b hold the same at every one
// of places (sameValue).
func samePlaces(places []place, a, b *stateView) bool {
	for _, p := range places {
		if !sameValue(a.at(p), b.at(p)) {
			return false
		}
	}
	return true
}

// otherAtEvery reports whether snapshots a and b differ at every one of
// places (sameValue).
func otherAtEvery(places []place, a, b *stateView) bool {
	for _, p := range places {
		if sameValue(a.at(p), b.at(p)) {
			return false
		}
	}
	return true
}

// sameValue reports whether two encoded values are the same, a missing one
// (null) being the zero value of the other's kind: a balance not yet in
// the snapshot is a balance of 0, a status not yet set is "". A deposit
// made again after a payout brought the balance back to 0 starts where
// the first deposit started.
func sameValue(x, y string) bool {
	switch {
	case x == y:
		return true
	case x == "null":
		return isZeroValue(y)
	case y == "null":
		return isZeroValue(x)
	}
	return false
}

func isZeroValue(s string) bool {
	switch s {
	case `""`, "false", "[]", "{}", "0":
		return true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f == 0
	}
	return false
}

// describePlaces says how snapshot b differs from snapshot a at places,
// cut to about limit bytes.
func describePlaces(places []place, a, b *stateView, limit int) string {
	var parts []string
	for _, p := range places {
		x, y := a.at(p), b.at(p)
		if x == y {
			continue
		}
		if p.elem {
			parts = append(parts, fmt.Sprintf("%s: %s → %s times", p.name(), x, y))
		} else {
			parts = append(parts, fmt.Sprintf("%s: %s → %s", p.name(), clip(x, 80), clip(y, 80)))
		}
	}
	sort.Strings(parts)
	return clip(strings.Join(parts, "; "), limit)
}

// addedAgain returns, among places (changed from b to a), a list entry
// that a added once more to a list that held it, in b, as often as pa
// left it, and that pb to pa added too: the entry, in words, or "".
func addedAgain(places []place, b, a, pb, pa *stateView) string {
	for _, p := range places {
		if !p.elem {
			continue
		}
		nb, _ := strconv.Atoi(b.at(p))
		na, _ := strconv.Atoi(a.at(p))
		npb, _ := strconv.Atoi(pb.at(p))
		npa, _ := strconv.Atoi(pa.at(p))
		if na > nb && npa > npb && nb >= npa {
			return p.name()
		}
	}
	return ""
}

// clockMoment stands for every moment left out by withoutClocks.
const clockMoment = "\x00clock"

// clockLike reports whether s reads as a moment a clock wrote: a date and
// a time of day to the second ("2006-01-02T15:04:05" or "2006-01-02
// 15:04:05"), then anything (a fraction, a zone). A created_at the sink
// stamps, SQLite's CURRENT_TIMESTAMP, a time.Time in JSON.
func clockLike(s string) bool {
	if len(s) < 19 {
		return false
	}
	for i := range 19 {
		c := s[i]
		switch i {
		case 4, 7:
			if c != '-' {
				return false
			}
		case 10:
			if c != 'T' && c != ' ' {
				return false
			}
		case 13, 16:
			if c != ':' {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

// holdsClock reports whether snapshot s may hold a moment (clockLike, a
// moment inside a string or in a compact form: textMoments, or a number
// that reads as one: epochLike): a quick look before withoutClocks
// decodes it.
func holdsClock(s string) bool {
	for i := 0; i+19 <= len(s); i++ {
		if s[i+13] == ':' && s[i+16] == ':' && s[i+4] == '-' && clockLike(s[i:]) {
			return true
		}
	}
	w := nowWindow()
	for i := 0; i+14 <= len(s); i++ {
		if w.momentAt(s, i) > 0 {
			return true
		}
	}
	return w.holdsNumber(s)
}

// withoutClocks returns snapshot s with every moment a string holds
// (textMoments: a date and a time of day that begins it, clockLike, or
// one inside it or in a compact form, 20261205-195822, within the suite's
// wall-clock window), and every number that reads as one (epochLike: Unix
// seconds to nanoseconds within that window), that no call was given
// (named) replaced by one placeholder; the rest of a string stays. Two runs
// stamp what they make at other moments: compared across runs (a scenario
// with the baseline), a row created at T1 is the row the baseline created
// at T0, and a receipt RCPT-<T1>-A the baseline's RCPT-<T0>-A, where
// RCPT-<T1>-B still differs. Within a run the moments stay: a repeat that
// stamps a row again is judged by what it changed. The result is encoded
// as encode does, so that snapshots compared are all passed through it; s
// is returned as it is when it cannot be decoded.
func withoutClocks(s string, named map[string]bool) string {
	w := nowWindow()
	given := func(x string) bool { return named[x] }
	return mapScalars(s, func(x string) string {
		if named[x] {
			return x
		}
		return w.textMoments(x, given)
	}, func(n json.Number) any { return w.numberMoment(n, named) })
}

// mapStrings returns snapshot s with every string value changed by f,
// encoded as encode does; s is returned as it is when it cannot be
// decoded.
func mapStrings(s string, f func(string) string) string {
	out, _ := mapText(s, f, false)
	return out
}

// mapText is mapStrings, with the keys of objects changed by f too where
// keys says so; false where two keys of one object became one.
func mapText(s string, f func(string) string, keys bool) (string, bool) {
	v, err := decodeState(s)
	if err != nil {
		return s, true
	}
	whole := true
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				if keys {
					k = f(k)
					if _, twice := out[k]; twice {
						whole = false
					}
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
		case string:
			return f(x)
		}
		return v
	}
	return encode(walk(v)), whole
}
