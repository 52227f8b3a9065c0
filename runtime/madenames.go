package runtime

import (
	"encoding/json"
	"slices"
	"strings"
)

// Names the sink hands out. A desk that numbers tickets T-1, T-2 in the
// order the opens ran, or a table's INTEGER PRIMARY KEY, names what a
// create made by when it ran. Two parallel creates of one model turn run
// in either order when two deliveries run at once (the baseline ran them
// one at a time, in one order), so the run can end with the same tickets
// under swapped names: no repeat's doing. sameUpToMadeNames compares two
// end states with such names left out, and only those: a name is left out
// where nothing but the order of creates can have chosen it.

// madeMark stands, in a compared state, for a name left out.
const madeMark = "\x00made"

// madeNames holds, by the path of a collection (pathKey), the members that
// one execution in the baseline added there, seen alone, as it added them:
// an object's key and its value's encoding (madeKey), or a list's row by
// its encoding. All of them: a key added twice with other values keeps
// both, whatever order the windows are read in.
type madeNames map[string]map[string]bool

// madeKey is the entry of madeNames for key k of an object added with
// value v (an encoding, which holds no NUL byte).
func madeKey(k, v string) string { return k + "\x00" + v }

// madeBy collects the members each window (the snapshots around a call
// seen alone in the baseline, or around a cluster) added: keys of an
// object, at any depth of objects, and rows of a list (lists of columns,
// or objects with an id, idKey) where rows were only inserted.
func madeBy(windows [][2]string) madeNames {
	made := madeNames{}
	var walk func(path []string, a, b any)
	walk = func(path []string, a, b any) {
		switch y := b.(type) {
		case map[string]any:
			x, _ := a.(map[string]any)
			for k, v := range y {
				if xv, ok := x[k]; ok {
					walk(append(path, k), xv, v)
					continue
				}
				made.add(path, madeKey(k, encode(v)))
				if isTable(v) {
					// A collection made with its first rows (a table
					// the commit created): the rows' names are the
					// sink's as much as in a table that was there.
					walk(append(path, k), nil, v)
				}
			}
		case []any:
			x, _ := a.([]any)
			had := entryCounts(x)
			var added []string
			for _, e := range y {
				k := encode(e)
				if had[k] > 0 {
					had[k]--
					continue
				}
				switch e.(type) {
				case []any, map[string]any:
					added = append(added, k)
				}
			}
			for _, n := range had {
				if n > 0 {
					// An entry left or changed (a status set on a
					// row that was there): not rows inserted, and
					// no row's name is the sink's new one.
					return
				}
			}
			for _, k := range added {
				made.add(path, k)
			}
		}
	}
	for _, w := range windows {
		a, errA := decodeState(w[0])
		b, errB := decodeState(w[1])
		if errA == nil && errB == nil {
			walk(nil, a, b)
		}
	}
	return made
}

// isTable reports whether v is a collection of rows: a non-empty object
// whose members are all objects or lists (payments by number), or a
// non-empty list whose entries are. A row of scalar fields (a ticket's
// title and status) is none: its keys are the agent's fields, not names
// a sink handed out.
func isTable(v any) bool {
	composite := func(e any) bool {
		switch e.(type) {
		case map[string]any, []any:
			return true
		}
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if !composite(e) {
				return false
			}
		}
		return len(x) > 0
	case []any:
		for _, e := range x {
			if !composite(e) {
				return false
			}
		}
		return len(x) > 0
	}
	return false
}

func (m madeNames) add(path []string, entry string) {
	p := pathKey(path)
	if m[p] == nil {
		m[p] = map[string]bool{}
	}
	m[p][entry] = true
}

// namedIn returns the text of every scalar in the arguments and identities
// of the calls of tr: a name the agent passed to a tool is its to choose
// and to mean (comment on T-1, swap T-1 and T-2), never left out. Unless
// an earlier call's answer held it: the sink handed it out (create_order
// answered 2, and the agent wrote the lines of order 2), and it names
// what the sink named; or it is a number passed under a parameter that
// names no member (idParam), and no moment (epochLike: a due time in Unix
// milliseconds is the agent's, as a due date in text is).
func namedIn(tr *Trace) map[string]bool {
	named := map[string]bool{}
	answered := map[string]bool{} // what the answers so far held
	var walk func(v any, into map[string]bool, skip map[string]bool)
	walk = func(v any, into, skip map[string]bool) {
		add := func(t string) {
			if !skip[t] {
				into[t] = true
			}
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				add(k)
				walk(e, into, skip)
			}
		case []any:
			for _, e := range x {
				walk(e, into, skip)
			}
		case string:
			add(x)
		case json.Number:
			add(x.String())
		case bool:
			add(encode(x))
		}
	}
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if v, err := decodeState(argsKey(o)); err == nil {
			args, _ := v.(map[string]any)
			for k, a := range args {
				if n, number := a.(json.Number); number && !idParam(k) && !nowWindow().epochLike(string(n)) {
					continue // a quantity, an amount: a value, not a name
				}
				walk(a, named, answered)
			}
		}
		if v, err := decodeState(o.Identity); err == nil {
			walk(v, named, answered)
		}
		if o.Result != nil {
			if b, err := json.Marshal(o.Result); err == nil {
				if v, err := decodeState(string(b)); err == nil {
					walk(v, answered, nil)
				}
			}
		}
	}
	return named
}

// idParam reports whether a parameter's name reads as one that names a
// member: id, or a reference to another collection's (order_id, orderId:
// refTarget). A number passed under any other name (qty, amount) is a
// value, even where it equals a number the sink gave a row by chance (a
// quantity of 3 beside the line the table numbered 3).
func idParam(name string) bool {
	return strings.EqualFold(name, "id") || refTarget(name) != ""
}

// scalarText is the text of a scalar as namedIn records it, and whether v
// is one.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return encode(x), true
	}
	return "", false
}

// sameUpToMadeNames reports whether the run's end and the baseline's hold
// the same values, lists in any order (sameUpToOrder), once the names of
// members the sink made are left out on both sides. A member of the
// baseline's end has its name left out only where one execution in the
// baseline, seen alone, added it (made), it is still as that execution
// added it, and no call of the run was given its name (named); the run's
// end has the same names left out at the same places, and, there, the
// names the baseline's end does not hold at all and no call was given
// (the next number of a sequence that an attempt rolled back advanced:
// the row the baseline made as 1, the run made as 2). So what is left out
// is a renaming of members that creates made and nothing changed since: a
// second create leaves a member more, an increment or a swap changes a
// value or a name the agent passed, and each still differs; a member the
// baseline held before its writes keeps its name on both sides.
func sameUpToMadeNames(end, baseEnd string, made madeNames, named map[string]bool) bool {
	if len(made) == 0 {
		return false
	}
	e, errE := decodeState(end)
	b, errB := decodeState(baseEnd)
	if errE != nil || errB != nil {
		return false
	}
	same := func(named map[string]bool) bool {
		l := markMade(b, made, named, e)
		lr := l.forRun(nil, e, b, named)
		if lr.renames(l) && refersTo(e, l.unheldIn(e)) {
			// A row of the run under a reference to a name the
			// baseline's row had and the run's row has not: the line
			// points at the order the rolled back attempt numbered,
			// or at a customer deleted and made again, and the
			// numbers are not the sink's alone.
			return false
		}
		base := encode(sortLists(l.strip(nil, b)))
		if encode(sortLists(lr.strip(nil, e))) == base {
			return true
		}
		// The run's rows refer to the members it renamed by their new
		// names (the retry's lines under its order 2, the baseline's
		// under its order 1): the references followed to the baseline's
		// names, the run may hold what the baseline held.
		if !lr.renames(l) {
			return false
		}
		e2, ok := lr.followRenames(e, b, l)
		return ok && encode(sortLists(lr.strip(nil, e2))) == base
	}
	if same(named) {
		return true
	}
	// A number given by chance (an order's id 1 and a quantity of 2
	// passed beside the rows the sink numbered 1 and 2): where the run's
	// end holds, where the baseline's creates made members, members the
	// baseline's end does not hold, under names no call of the run was
	// given, the sink named those, and the baseline's made members too
	// (sameChangeUpToMadeNames).
	fresh := freshNamesIn(e, b, made)
	if len(fresh) == 0 {
		return false
	}
	for _, n := range fresh {
		if named[n] {
			return false
		}
	}
	relaxed := make(map[string]bool, len(named))
	for n := range named {
		relaxed[n] = true
	}
	for _, n := range madeNamesIn(b, made) {
		delete(relaxed, n)
	}
	return len(relaxed) < len(named) && same(relaxed)
}

// renames reports whether lr (forRun of l) leaves out names of the run's
// end that l does not: members the run made under names of its own.
func (lr leftOut) renames(l leftOut) bool {
	for p, ns := range lr.names {
		if len(ns) > len(l.names[p]) {
			return true
		}
	}
	return false
}

// unheldIn returns the names l leaves out of the baseline's end that the
// run's end e does not hold at their place (the text of each, as namedIn
// writes it), each with the name of its collection (the last key of its
// path, lower case): the baseline's members the run holds under other
// names.
func (l leftOut) unheldIn(e any) map[string][]string {
	out := map[string][]string{}
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		p := pathKey(path)
		held := map[string]bool{}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				held[k] = true
				if !l.names[p][k] {
					walk(append(path, k), e)
				}
			}
		case []any:
			if col, ok := l.cols[p]; ok {
				for _, r := range x {
					if k, ok := rowKey(r, col); ok {
						held[k] = true
					}
				}
			}
		}
		coll := ""
		if len(path) > 0 {
			coll = strings.ToLower(path[len(path)-1])
		}
		for n := range l.names[p] {
			if held[n] {
				continue
			}
			if _, isList := l.cols[p]; isList {
				if d, err := decodeState(n); err == nil {
					if t, ok := scalarText(d); ok {
						out[t] = append(out[t], coll)
					}
				}
				continue
			}
			out[n] = append(out[n], coll)
		}
	}
	walk(nil, e)
	return out
}

// refersTo reports whether v holds, in a collection other than the
// referred one, a reference to one of names (with their collections,
// unheldIn): a key that reads as a reference to a row of that collection
// (order_id, orderId or orderID in a line, for a row of "orders" or
// "u_orders") whose scalar's text is the name. A tenant_id of 1 beside an
// order numbered 1, or a customer_id of 1 in that order, refers to no
// order.
func refersTo(v any, names map[string][]string) bool {
	if len(names) == 0 {
		return false
	}
	var walk func(path []string, v any) bool
	walk = func(path []string, v any) bool {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if to := refTarget(k); to != "" {
					if t, ok := scalarText(e); ok {
						for _, coll := range names[t] {
							if strings.Contains(coll, to) && !slices.ContainsFunc(path, func(p string) bool { return strings.ToLower(p) == coll }) {
								return true
							}
						}
					}
				}
				if walk(append(path, k), e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(path, e) {
					return true
				}
			}
		}
		return false
	}
	return walk(nil, v)
}

// refTarget returns, for an object's key that reads as a reference to a
// row of another collection (order_id, orderId, orderID), what it refers
// to, lower case ("order"); "" for any other key, and for a row's own id.
func refTarget(k string) string {
	for _, suf := range [...]string{"_id", "_ID", "Id", "ID"} {
		if t, ok := strings.CutSuffix(k, suf); ok && len(t) >= 2 {
			return strings.ToLower(strings.TrimSuffix(t, "_"))
		}
	}
	return ""
}

// freshNamesIn returns the names (as namedIn writes them) of the members of
// the run's end e that the baseline's end b does not hold, at the places
// where the baseline's creates made members (made): an object's keys, and
// the ids of rows that are objects (idKey).
func freshNamesIn(e, b any, made madeNames) []string {
	var out []string
	eachUnheld(nil, e, b, func(p string) bool { return len(made[p]) > 0 }, func(p string) (int, bool) { return -1, len(made[p]) > 0 },
		func(_, _, text string) { out = append(out, text) })
	return out
}

// eachUnheld calls fn with the path key, the name (an object's key, or a
// row's rowKey) and its text (as namedIn writes it) of each member of the
// run's end e, at path, that the baseline's end b does not hold: among an
// object's keys where keys says its members are named by their keys, and
// among a list's rows, by the column that rows gives (-1: an object's id),
// where it gives one. It walks down the objects both hold a key of.
func eachUnheld(path []string, e, b any, keys func(p string) bool, rows func(p string) (int, bool), fn func(p, name, text string)) {
	p := pathKey(path)
	switch x := e.(type) {
	case map[string]any:
		y, _ := b.(map[string]any)
		named := keys(p)
		for k, v := range x {
			if _, held := y[k]; !held && named {
				fn(p, k, k)
				continue
			}
			eachUnheld(append(path, k), v, y[k], keys, rows, fn)
		}
	case []any:
		col, ok := rows(p)
		if !ok {
			return
		}
		y, _ := b.([]any)
		held := map[string]bool{}
		for _, r := range y {
			if k, ok := rowKey(r, col); ok {
				held[k] = true
			}
		}
		for _, r := range x {
			k, ok := rowKey(r, col)
			if !ok || held[k] {
				continue
			}
			if t, ok := keyText(k); ok {
				fn(p, k, t)
			}
		}
	}
}

// keyText returns the text (as namedIn writes it) of a row's name, given
// as rowKey returns it.
func keyText(k string) (string, bool) {
	d, err := decodeState(k)
	if err != nil {
		return "", false
	}
	return scalarText(d)
}

// forRun returns l (the names left out of the baseline's end, b) with the
// names of the run's end (e, at path) added that, at a place where l
// leaves names out, the baseline's end does not hold and no call was
// given (named).
func (l leftOut) forRun(path []string, e, b any, named map[string]bool) leftOut {
	out := leftOut{names: make(map[string]map[string]bool, len(l.names)), cols: l.cols}
	for p, ns := range l.names {
		out.names[p] = ns
	}
	copied := map[string]bool{}
	add := func(p, k string) {
		if !copied[p] {
			copied[p] = true
			c := make(map[string]bool, len(l.names[p])+1)
			for n := range l.names[p] {
				c[n] = true
			}
			out.names[p] = c
		}
		out.names[p][k] = true
	}
	eachUnheld(path, e, b, func(p string) bool { return len(l.names[p]) > 0 }, func(p string) (int, bool) { c, ok := l.cols[p]; return c, ok },
		func(p, k, text string) {
			if !named[text] {
				add(p, k)
			}
		})
	return out
}

// sameChangeUpToMadeNames reports whether the change from snapshot a to b
// and the change from c to d are one change once the names that each made
// (members it added, named by no call) are left out: an execution that
// opened a ticket as T-2 made the change that one execution made as T-1.
// A second ticket opened is a member more, and still differs.
//
// A name a call of the run was given (named) is the agent's, not the
// sink's; but a number can be given by chance (a quantity of 2 beside the
// row the sink numbered 2). Where the second change (the run's) made
// members whose names no call of the run was given, the sink named them,
// as it did in the first (one execution in the baseline, by the same
// code) whatever the run passed: the comparison is made again with the
// first change's names left out as well (an upsert that advanced the
// sequence on its conflict made as row 3 the line one execution made as
// row 2, with a quantity of 2). The other way round, a name the run gave
// (T-2 passed to a call) may be its choice, and stays, unless the sink
// itself made a member under that name in the baseline (baseMade: the
// names sameUpToMadeNames leaves out of the baseline's end), which says
// the sink hands it out: two deliveries that upserted one line at once,
// the later insert taking the sequence's first number, made as row 2 the
// line one execution made as row 1, where the baseline's second line is
// row 2 and the agent passed a quantity of 2.
func sameChangeUpToMadeNames(a, b, c, d string, named, baseMade map[string]bool) bool {
	return changeUpToMadeNames(a, b, c, d, named, baseMade, false)
}

// sameChangeUpToMadeNamesInOrder is sameChangeUpToMadeNames with every
// list's entries kept in their order: for two changes from one state in one
// order that move entries, where the order they leave is part of the change
// (movesEntries).
func sameChangeUpToMadeNamesInOrder(a, b, c, d string, named, baseMade map[string]bool) bool {
	return changeUpToMadeNames(a, b, c, d, named, baseMade, true)
}

func changeUpToMadeNames(a, b, c, d string, named, baseMade map[string]bool, inOrder bool) bool {
	type side struct {
		x, y any
		made madeNames
	}
	load := func(x, y string) (side, bool) {
		xv, errX := decodeState(x)
		yv, errY := decodeState(y)
		if errX != nil || errY != nil {
			return side{}, false
		}
		made := madeBy([][2]string{{x, y}})
		return side{xv, yv, made}, len(made) > 0
	}
	change := func(s side, named map[string]bool) string {
		l := markMade(s.y, s.made, named, nil)
		y := l.refsToMade(s.y, l.strip(nil, s.y))
		if inOrder {
			return describeChange(encode(l.strip(nil, s.x)), encode(y), -1)
		}
		return describeChange(encode(sortLists(l.strip(nil, s.x))), encode(sortLists(y)), -1)
	}
	ab, ok1 := load(a, b)
	cd, ok2 := load(c, d)
	if !ok1 || !ok2 {
		return false
	}
	if change(ab, named) == change(cd, named) {
		return true
	}
	abNames, cdNames := madeNamesIn(ab.y, ab.made), madeNamesIn(cd.y, cd.made)
	given := func(ns []string, sinks map[string]bool) bool {
		for _, n := range ns {
			if named[n] && !sinks[n] {
				return true
			}
		}
		return false
	}
	if len(cdNames) == 0 || given(cdNames, baseMade) || !given(abNames, nil) {
		return false
	}
	relaxed := make(map[string]bool, len(named))
	for n := range named {
		relaxed[n] = true
	}
	for _, n := range append(abNames, cdNames...) {
		delete(relaxed, n)
	}
	return change(ab, relaxed) == change(cd, relaxed)
}

// refsToMade returns stripped (v stripped by l) with each reference to a
// member whose name l leaves out of v rewritten to what that member holds
// less its name: a scalar under a key that reads as a reference (charge_id,
// OrderID: refTarget) to a collection whose name reads as its target
// (charges, orders, korders: readsAsRowOf), whose text is the name of a
// member that collection gained in the change. A receipt written with
// its charge in one transaction refers to the charge by the number the
// sequence gave it, 10 where one execution's was 1; with the charge's
// number left out and the reference kept, the two changes differed in
// every run of two deliveries at once of a correct agent, whenever Setup
// left the sequences counting (TRUNCATE without RESTART IDENTITY, GORM's
// Delete) or a refused charge used a number up (red team rtP #1, #2). The
// reference now says which row it names by that row's content: a second
// receipt under the one charge, or a second charge with its own, is still
// a member more. A name two collections that the key reads as both gained
// keeps its number, as does a reference to a member the change did not
// make.
func (l leftOut) refsToMade(v, stripped any) any {
	type member struct{ coll, token string }
	made := map[string][]member{} // by the name's text
	for p, ns := range l.names {
		var path []string
		if p != "" {
			path = strings.Split(p, "\x01")
		}
		if len(path) == 0 || len(ns) == 0 {
			continue
		}
		coll := strings.ToLower(path[len(path)-1])
		c := valueAt(v, path)
		col, isList := l.cols[p]
		if isList && col != -1 {
			continue // a list of columns names no reference's target
		}
		for n := range ns {
			m, ok := memberAt(c, n, col, isList)
			if !ok {
				continue
			}
			t := n
			if isList {
				if t, ok = keyText(n); !ok {
					continue
				}
				m = withoutColumn(m, col)
			}
			made[t] = append(made[t], member{coll, madeMark + "\x00" + coll + "\x00" + encode(sortLists(m))})
		}
	}
	if len(made) == 0 {
		return stripped
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[k] = walk(e)
				to := refTarget(k)
				t, ok := scalarText(e)
				if to == "" || !ok {
					continue
				}
				token := ""
				for _, m := range made[t] {
					if readsAsRowOf(m.coll, to) {
						if token != "" && token != m.token {
							token = "" // two members it may name: kept
							break
						}
						token = m.token
					}
				}
				if token != "" {
					out[k] = token
				}
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
	return walk(stripped)
}

// madeNamesIn returns the names (as namedIn writes them) of the members of
// y that made holds: an object's keys, and the ids of rows that are
// objects (idKey).
func madeNamesIn(y any, made madeNames) []string {
	var out []string
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		p := pathKey(path)
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if made[p][madeKey(k, encode(e))] {
					out = append(out, k)
					continue
				}
				walk(append(path, k), e)
			}
		case []any:
			for _, r := range x {
				if _, ok := r.(map[string]any); !ok || !made[p][encode(r)] {
					continue
				}
				if k, ok := rowKey(r, -1); ok {
					if d, err := decodeState(k); err == nil {
						if t, ok := scalarText(d); ok {
							out = append(out, t)
						}
					}
				}
			}
		}
	}
	walk(nil, y)
	return out
}

// leftOut holds, by path, the names left out of a state (for a list, the
// values of the column that names its rows, cols).
type leftOut struct {
	names map[string]map[string]bool
	cols  map[string]int
}

// markMade returns the names of ref (a decoded state) to leave out: the
// members made (made) and still as made, named by no call (named). Where
// the member made is a table made with its rows (isTable: the first
// payment's row in the payments a commit created) and other (the run's
// end, or nil), holds a collection under the same name at that place, the
// table keeps its name and its rows' names are left out instead: the
// run's commit made the table too, and numbered its row otherwise.
func markMade(ref any, made madeNames, named map[string]bool, other any) leftOut {
	l := leftOut{names: map[string]map[string]bool{}, cols: map[string]int{}}
	var mark func(path []string, v, o any)
	mark = func(path []string, v, o any) {
		p := pathKey(path)
		switch x := v.(type) {
		case map[string]any:
			om, _ := o.(map[string]any)
			for k, e := range x {
				if made[p][madeKey(k, encode(e))] && !named[k] && !(isTable(e) && isTable(om[k])) {
					if l.names[p] == nil {
						l.names[p] = map[string]bool{}
					}
					l.names[p][k] = true
					continue
				}
				mark(append(path, k), e, om[k])
			}
		case []any:
			if col, ok := nameColumn(x, made[p], named); ok {
				l.cols[p] = col
				l.names[p] = map[string]bool{}
				ids := madeIDs(made[p], col)
				for _, r := range x {
					if k, _ := rowKey(r, col); made[p][encode(r)] || ids[k] {
						l.names[p][k] = true
					}
				}
			}
		}
	}
	mark(nil, ref, other)
	return l
}

// strip returns v (a decoded state, at path) with the names of l left
// out: an object's members so named become a list of their values under
// madeMark, a row so named has madeMark for its name.
func (l leftOut) strip(path []string, v any) any {
	p := pathKey(path)
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		var bag []any
		for k, e := range x {
			if l.names[p][k] {
				bag = append(bag, e)
				continue
			}
			out[k] = l.strip(append(path, k), e)
		}
		if bag != nil {
			// A map's members have no order: the bag takes theirs from
			// their encoding, not from the map's iteration (fourth red
			// team, /tmp/rt38 s1 TestGuardEvMap, compared in order).
			slices.SortFunc(bag, func(a, b any) int { return strings.Compare(encode(a), encode(b)) })
			out[madeMark] = bag
		}
		return out
	case []any:
		col, ok := l.cols[p]
		if !ok {
			return x
		}
		out := make([]any, len(x))
		for i, r := range x {
			out[i] = r
			if k, ok := rowKey(r, col); ok && l.names[p][k] {
				out[i] = withoutColumn(r, col)
			}
		}
		return out
	}
	return v
}

// nameColumn returns the column that names the rows of list l that an
// execution made (made): an object's id (idKey), or the one column of a list of
// columns whose values in those rows are scalars, unique in l, and given
// to no call (named). A subject the agent passed, or a status many rows
// share, is no name the sink handed out; without exactly one such column
// no name is left out.
func nameColumn(l []any, made map[string]bool, named map[string]bool) (int, bool) {
	var rows []any
	ids := madeIDs(made, -1)
	for _, r := range l {
		if made[encode(r)] {
			rows = append(rows, r)
		} else if k, ok := rowKey(r, -1); ok && ids[k] {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return 0, false
	}
	usable := func(col int) bool {
		if _, ok := rowsBy(l, col); !ok {
			return false
		}
		for _, r := range rows {
			k, ok := rowKey(r, col)
			if !ok {
				return false
			}
			var v any
			if d, err := decodeState(k); err == nil {
				v = d
			}
			if t, ok := scalarText(v); !ok || named[t] {
				return false
			}
		}
		return true
	}
	if _, ok := rows[0].(map[string]any); ok {
		return -1, usable(-1)
	}
	r0, ok := rows[0].([]any)
	if !ok {
		return 0, false
	}
	found := -1
	for c := range r0 {
		if usable(c) {
			if found >= 0 {
				return 0, false // two could be the name: neither is left out
			}
			found = c
		}
	}
	return found, found >= 0
}

// madeIDs returns the names (column col; -1: an object's id, idKey) of
// the rows made (entries of madeNames at one place) that are objects: a
// row the baseline's end holds under such a name is the one an execution
// made, also where a later write changed it since (a ticket opened, then
// moved to in_progress, under the random id the sink gave it). Nil for a
// list of columns, whose rows are matched whole.
func madeIDs(made map[string]bool, col int) map[string]bool {
	if col != -1 || len(made) == 0 {
		return nil
	}
	var ids map[string]bool
	for e := range made {
		if len(e) == 0 || e[0] != '{' {
			continue
		}
		r, err := decodeState(e)
		if err != nil {
			continue
		}
		if _, ok := r.(map[string]any); !ok {
			continue
		}
		if k, ok := rowKey(r, -1); ok {
			if ids == nil {
				ids = map[string]bool{}
			}
			ids[k] = true
		}
	}
	return ids
}

// withoutColumn returns row r with its name (column col, -1: its id,
// idKey) left out.
func withoutColumn(r any, col int) any {
	switch x := r.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[k] = v
		}
		out[idKey(x)] = madeMark
		return out
	case []any:
		out := append([]any(nil), x...)
		out[col] = madeMark
		return out
	}
	return r
}

// sameUpToRenaming reports whether two end states of the same calls run in
// other orders, end and ref, hold one world once the names the sink made
// are left out (markMade, forRun, strip: as sameUpToMadeNames), more
// strictly than sameUpToMadeNames, for a check about order: a list keeps
// its order unless the sink named its rows (a table read by its INTEGER
// PRIMARY KEY, whose order is the numbering's); some name must have been
// left out; and no name left out is held anywhere else in either state
// (heldElsewhere), where it may say which member is which (a customer's
// primary contact, by id). A queue whose tracks landed in another order, or
// contacts numbered the other way beside a primary that kept its number,
// are other worlds.
func sameUpToRenaming(end, ref string, made madeNames, named map[string]bool) bool {
	if len(made) == 0 {
		return false
	}
	e, errE := decodeState(end)
	r, errR := decodeState(ref)
	if errE != nil || errR != nil {
		return false
	}
	l := markMade(r, made, named, e)
	le := l.forRun(nil, e, r, named)
	if !le.any() {
		return false
	}
	if le.renames(l) && refersTo(e, l.unheldIn(e)) {
		return false
	}
	if texts := le.renamedTexts(e, r); le.heldElsewhere(e, texts) || l.heldElsewhere(r, texts) {
		return false
	}
	return encode(le.sortNamed(nil, le.strip(nil, e))) == encode(l.sortNamed(nil, l.strip(nil, r)))
}

// any reports whether l leaves out a name.
func (l leftOut) any() bool {
	for _, ns := range l.names {
		if len(ns) > 0 {
			return true
		}
	}
	return false
}

// sortNamed returns v (stripped by l, at path) with the lists whose rows l
// names (cols) and the bags of members left out (madeMark) in the order of
// their encodings; every other list keeps its order.
func (l leftOut) sortNamed(path []string, v any) any {
	p := pathKey(path)
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == madeMark {
				out[k] = sortLists(e)
				continue
			}
			out[k] = l.sortNamed(append(path, k), e)
		}
		return out
	case []any:
		if _, ok := l.cols[p]; ok {
			return sortLists(x)
		}
	}
	return v
}

// heldElsewhere reports whether a name that l leaves out is held in v as
// a scalar, other than as the name itself or as another row's own id: outside the members
// left out (a primary contact's id, which says which contact is which), or
// within one under a key that reads as a reference to a collection whose
// name holds that target (a line's order_id beside the orders renamed).
// Within a member left out, any other scalar travels with it (a quantity
// of 2 in the line the sink numbered 2).
func (l leftOut) heldElsewhere(v any, texts map[string][]string) bool {
	if len(texts) == 0 {
		return false
	}
	var walk func(path []string, v any, inside bool) bool
	walk = func(path []string, v any, inside bool) bool {
		p := pathKey(path)
		switch x := v.(type) {
		case map[string]any:
			id := idKey(x)
			own := ""
			if len(path) > 0 {
				own = strings.ToLower(path[len(path)-1])
			}
			for k, e := range x {
				if t, ok := scalarText(e); ok {
					colls, held := texts[t]
					// A row's own id names it, among its collection's;
					// a note's order_id, the one number it has, names
					// a row of orders (idKey reads either way).
					to := refTarget(k)
					if !held || k == id && (to == "" || !slices.ContainsFunc(colls, func(c string) bool { return c != own && strings.Contains(c, to) })) {
						continue
					}
					if !inside {
						return true
					}
					if to := refTarget(k); to != "" && slices.ContainsFunc(colls, func(c string) bool { return strings.Contains(c, to) }) {
						return true
					}
					continue
				}
				if walk(append(path, k), e, inside || l.names[p][k]) {
					return true
				}
			}
		case []any:
			col, named := l.cols[p]
			for _, row := range x {
				in := inside
				if named {
					if k, ok := rowKey(row, col); ok && l.names[p][k] {
						in = true
						row = withoutColumn(row, col)
					}
				}
				switch y := row.(type) {
				case map[string]any:
					if walk(path, y, in) {
						return true
					}
				case []any:
					for _, c := range y {
						if t, ok := scalarText(c); ok {
							if _, held := texts[t]; held && !in {
								return true
							}
						} else if walk(path, c, in) {
							return true
						}
					}
				default:
					if t, ok := scalarText(y); ok {
						if _, held := texts[t]; held && !in {
							return true
						}
					}
				}
			}
		}
		return false
	}
	return walk(nil, v, false)
}

// renamedTexts returns the text of every name l leaves out (as namedIn
// writes it) whose member e and r do not hold alike under it, each with
// the names of its collections (the last key of its path, lower case): the
// names that stand for other members in the two states. An order both
// hold as row 1, beside lines numbered otherwise, is no renaming, and a
// line's order_id of 1 refers to it in both.
func (l leftOut) renamedTexts(e, r any) map[string][]string {
	out := map[string][]string{}
	for p, ns := range l.names {
		var path []string
		if p != "" {
			path = strings.Split(p, "\x01")
		}
		ev, rv := valueAt(e, path), valueAt(r, path)
		coll := ""
		if i := strings.LastIndex(p, "\x01"); i >= 0 {
			coll = strings.ToLower(p[i+1:])
		} else {
			coll = strings.ToLower(p)
		}
		col, isList := l.cols[p]
		for n := range ns {
			t := n
			if isList {
				var ok bool
				if t, ok = keyText(n); !ok {
					continue
				}
			}
			if m, ok := memberAt(ev, n, col, isList); ok {
				if o, ok := memberAt(rv, n, col, isList); ok && encode(m) == encode(o) {
					continue // the same member under the same name
				}
			}
			out[t] = append(out[t], coll)
		}
	}
	return out
}

// valueAt returns the value at path (object keys) in v, or nil.
func valueAt(v any, path []string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// memberAt returns the member of collection c named n: an object's key,
// or, in a list (isList), the row whose column col (-1: its id) is n.
func memberAt(c any, n string, col int, isList bool) (any, bool) {
	if !isList {
		m, ok := c.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok := m[n]
		return v, ok
	}
	l, _ := c.([]any)
	for _, r := range l {
		if k, ok := rowKey(r, col); ok && k == n {
			return r, true
		}
	}
	return nil, false
}

// followRenames returns the run's end e with every reference to a member
// the run holds under a name of its own (lr, against l, the names left out
// of the baseline's end b) rewritten to the baseline's name for it, and
// whether there was such a member. A member of the run is the baseline's
// where the two hold the same (less its name, and with the references in
// it followed so far): an order R-1 numbered 2 is the baseline's order 1,
// and then a line under order 2 is a line under order 1. A reference is a
// scalar under a key that reads as one (order_id: refTarget), to a
// collection whose name holds its target (orders). Members that cannot be
// told apart (two alike) are paired in the order of their names.
func (lr leftOut) followRenames(e, b any, l leftOut) (any, bool) {
	rename := map[string]map[string]string{} // by collection: the run's name's text to the baseline's
	cur := e
	for range len(lr.names) + 1 {
		grew := false
		for p, ns := range lr.names {
			var path []string
			if p != "" {
				path = strings.Split(p, "\x01")
			}
			col, isList := lr.cols[p]
			content := func(m any) string {
				if isList {
					m = withoutColumn(m, col)
				}
				return encode(sortLists(m))
			}
			rc, bc := valueAt(cur, path), valueAt(b, path)
			// The baseline's members under names the run does not hold,
			// by what they hold.
			byContent := map[string][]string{}
			for n := range l.names[p] {
				if _, held := memberAt(rc, n, col, isList); held {
					continue
				}
				if m, ok := memberAt(bc, n, col, isList); ok {
					k := content(m)
					byContent[k] = append(byContent[k], n)
				}
			}
			var runNames []string
			for n := range ns {
				if l.names[p][n] {
					continue
				}
				if _, held := memberAt(bc, n, col, isList); !held {
					runNames = append(runNames, n)
				}
			}
			slices.Sort(runNames)
			for _, names := range byContent {
				slices.Sort(names)
			}
			for _, n := range runNames {
				m, ok := memberAt(rc, n, col, isList)
				if !ok {
					continue
				}
				k := content(m)
				cands := byContent[k]
				if len(cands) == 0 {
					continue
				}
				byContent[k] = cands[1:]
				from, to := n, cands[0]
				if isList {
					from, _ = keyText(n)
					to, _ = keyText(cands[0])
				}
				if rename[p] == nil {
					rename[p] = map[string]string{}
				}
				if _, done := rename[p][from]; !done {
					rename[p][from] = to
					grew = true
				}
			}
		}
		if !grew {
			break
		}
		cur = followRefs(e, rename)
	}
	return cur, len(rename) > 0
}

// followRefs returns v with each reference (a scalar under a key that
// reads as one, refTarget) to a collection that rename renames (by path,
// to the collection whose last key holds the target) rewritten to the new
// name, of the scalar's type.
func followRefs(v any, rename map[string]map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = followRefs(e, rename)
			to := refTarget(k)
			t, ok := scalarText(e)
			if to == "" || !ok {
				continue
			}
			for p, names := range rename {
				coll := p
				if i := strings.LastIndex(p, "\x01"); i >= 0 {
					coll = p[i+1:]
				}
				if n, ok := names[t]; ok && strings.Contains(strings.ToLower(coll), to) {
					if _, num := e.(json.Number); num {
						out[k] = json.Number(n)
					} else {
						out[k] = n
					}
					break
				}
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = followRefs(e, rename)
		}
		return out
	}
	return v
}
