package runtime

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// outcomesAlike reports whether two scheduled runs ended with the same
// outcome, up to the names the sink made. A create whose sink hands out
// names in the order it runs (INV-1, INV-2 from a counter) returns INV-1 in
// one order and INV-2 in the other: two parallel creates of invoices for
// acme and globex end with the same invoices under swapped names, which
// is no order dependence of the agent's. So where the outcomes differ, the
// names that matching write calls of the two runs (one op, identity and
// arguments) returned are paired, position by position in their results;
// where the pairs make a one-to-one renaming, a's outcome is renamed (every
// string value or object key that is one of the names, whole) and compared
// again. Only names are renamed: strings with a digit that the outcome
// holds as keys or a call was given as an argument. What the order did
// decide stays different: which invoice the agent called the primary one,
// a status the first call to run got, a sentence that quotes a name.
//
// Moments are left out first, where no call was given them: the sink
// stamps what it does when it does it, and two schedules run at other
// moments (a log of "2026-05-01T10:00:00.123Z opened A" lines). Only the
// moment is left out of a string that begins with one; the rest of it
// stays, so the order of the lines of such a log still counts.
func outcomesAlike(a, b *Result) bool {
	if a.Outcome == b.Outcome {
		return true
	}
	if a.Trace == nil || b.Trace == nil {
		return false
	}
	na, nb := namedIn(a.Trace), namedIn(b.Trace)
	oa, ob := a.Outcome, b.Outcome
	if holdsClock(oa) || holdsClock(ob) {
		oa, ob = withoutMoments(oa, na, nb), withoutMoments(ob, na, nb)
		if oa == ob {
			return true
		}
	}
	// So are the tokens each run's sink drew that no call was given or
	// answered (freshTokens), read in b's: an Outcome that lists the
	// accounts two parallel calls made, each with its api_token.
	if rn := freshTokens(oa, ob, tokenTexts(a.Trace, b.Trace)); rn != nil && renamedState(oa, rn) == normState(ob) {
		return true
	}
	rename := madeRenaming(a.Trace, b.Trace)
	if len(rename) == 0 {
		return false
	}
	va, err := decodeState(oa)
	if err != nil {
		return false
	}
	vb, err := decodeState(ob)
	if err != nil {
		return false
	}
	ka, kb := keysIn(va), keysIn(vb)
	for x, y := range rename {
		// A name names something: a key of the outcome (the invoices by
		// name) or an argument of a call (attach to INV-1), with a digit
		// in it, as a counter's or a random id has. A status returned
		// to whichever call ran first (confirmed, waitlisted) is what
		// the order decided, and is not renamed.
		if !hasDigit(x) || !hasDigit(y) || !(ka[x] || na[x]) || !(kb[y] || nb[y]) {
			delete(rename, x)
		}
	}
	if len(rename) == 0 {
		return false
	}
	return encode(renamed(va, rename)) == encode(vb)
}

// keysIn returns the keys of every object in v, at any depth.
func keysIn(v any) map[string]bool {
	keys := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				keys[k] = true
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return keys
}

func hasDigit(s string) bool {
	return strings.ContainsAny(s, "0123456789")
}

// madeRenaming pairs the strings that the write calls of ta and tb that
// match (opKey, each made once in each run) returned, where they differ:
// nil when nothing pairs or the pairs are not one to one.
func madeRenaming(ta, tb *Trace) map[string]string {
	rb := writeResults(tb)
	to, from := map[string]string{}, map[string]string{}
	for k, x := range writeResults(ta) {
		y, ok := rb[k]
		if !ok {
			continue
		}
		if !pairNames(x, y, to, from) {
			return nil
		}
	}
	return to
}

// writeResults decodes the result of each successful write call of tr, by
// opKey; a key of two calls is left out (which pairs with which is not
// known).
func writeResults(tr *Trace) map[string]any {
	out := map[string]any{}
	twice := map[string]bool{}
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.Kind != KindWrite || o.Status != StatusSuccess || o.Result == nil {
			continue
		}
		k := opKey(o)
		if _, ok := out[k]; ok || twice[k] {
			delete(out, k)
			twice[k] = true
			continue
		}
		c, err := Canonical(o.Result)
		if err != nil {
			continue
		}
		if v, err := decodeState(c); err == nil {
			out[k] = v
		}
	}
	return out
}

// pairNames walks two results in step and pairs the strings that differ at
// one place, in to and from; false when a string would pair with two.
// Results of other shapes pair nothing.
func pairNames(x, y any, to, from map[string]string) bool {
	switch xv := x.(type) {
	case string:
		yv, ok := y.(string)
		if !ok || xv == yv {
			return true
		}
		if t, ok := to[xv]; ok && t != yv {
			return false
		}
		if f, ok := from[yv]; ok && f != xv {
			return false
		}
		to[xv], from[yv] = yv, xv
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok || len(xv) != len(yv) {
			return true
		}
		for k, e := range xv {
			if f, ok := yv[k]; ok && !pairNames(e, f, to, from) {
				return false
			}
		}
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return true
		}
		for i := range xv {
			if !pairNames(xv[i], yv[i], to, from) {
				return false
			}
		}
	}
	return true
}

// renamed returns v with every string value and object key that rename
// names replaced.
func renamed(v any, rename map[string]string) any {
	switch x := v.(type) {
	case string:
		if r, ok := rename[x]; ok {
			return r
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if r, ok := rename[k]; ok {
				k = r
			}
			out[k] = renamed(e, rename)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = renamed(e, rename)
		}
		return out
	}
	return v
}

// withoutMoments returns outcome s with every moment a string holds
// (textMoments: one that begins it, as clockLike reads it, to the end of
// its fraction of a second and its zone; one inside it or in a compact
// form, within the suite's wall-clock window) replaced by one
// placeholder, unless a call of either run was given that string or that
// moment (named): the rest of the string stays. So is a number that reads
// as a moment (epochLike), whole, unless a call was given it. s is
// returned as it is when it cannot be decoded.
func withoutMoments(s string, named ...map[string]bool) string {
	w := nowWindow()
	given := func(x string) bool {
		for _, n := range named {
			if n[x] {
				return true
			}
		}
		return false
	}
	return mapScalars(s, func(x string) string {
		if given(x) {
			return x
		}
		return w.textMoments(x, given)
	}, func(n json.Number) any { return w.numberMoment(n, named...) })
}

// momentLen returns the length of the moment s begins with (clockLike):
// its date and time of day, a fraction of a second, and a zone (Z, +01:00,
// +01, or " +0000 UTC", as time.Time's String writes it, with its
// monotonic reading "m=+0.001"): momentEnd.
func momentLen(s string) int {
	n, _, _ := momentEnd(s, 19, false)
	return min(n, len(s))
}

// numberedRowsAlike reports whether outcomes a and b list the same rows up
// to the numbers the sink gave them: where a list's rows are objects whose
// id (idKey) is a whole number, the ids are left out and the rows compared
// in any order (their order is the numbering's, as a table read by its
// INTEGER PRIMARY KEY gives them), the same numbers handed out in both; a
// number left out that the outcome holds outside the rows that had it (a
// primary line, by id) keeps them apart, since it says which row is which.
// Only where the two schedules' State ends are one world (Suite.sameWorld):
// three lines added at once, numbered in the order they landed; and only
// numbers that name rows of those ends (sa, sb: rowIDs), not the agent's
// own (a rank).
func numberedRowsAlike(a, b string, sa, sb map[string]bool) bool {
	va, err := decodeState(a)
	if err != nil {
		return false
	}
	vb, err := decodeState(b)
	if err != nil {
		return false
	}
	ia, ib := map[string]int{}, map[string]int{}
	xa, oka := stripNumbered(va, ia)
	xb, okb := stripNumbered(vb, ib)
	if !oka || !okb || len(ia) == 0 || !maps.Equal(ia, ib) {
		return false
	}
	for id := range ia {
		if !sa[id] || !sb[id] {
			return false
		}
	}
	if holdsNumber(xa, ia) || holdsNumber(xb, ib) {
		return false
	}
	return encode(xa) == encode(xb)
}

// rowIDs returns the whole-number ids (idKey) of the rows of every list of
// objects in the State snapshot end.
func rowIDs(end string) map[string]bool {
	v, err := decodeState(end)
	if err != nil {
		return nil
	}
	ids := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				if r, ok := e.(map[string]any); ok {
					if n, ok := r[idKey(r)].(json.Number); ok && wholeNumber(n) {
						ids[n.String()] = true
					}
				}
				walk(e)
			}
		}
	}
	walk(v)
	return ids
}

// stripNumbered returns v with the ids of numbered rows left out and their
// lists sorted (numberedRowsAlike), counting the ids left out in ids;
// false when a list mixes numbered rows with others.
func stripNumbered(v any, ids map[string]int) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			s, ok := stripNumbered(e, ids)
			if !ok {
				return nil, false
			}
			out[k] = s
		}
		return out, true
	case []any:
		numbered := 0
		rows := make([]any, len(x))
		for i, e := range x {
			if r, ok := e.(map[string]any); ok {
				if k := idKey(r); k != "" {
					if n, ok := r[k].(json.Number); ok && wholeNumber(n) {
						numbered++
						ids[n.String()]++
						rest := maps.Clone(r)
						delete(rest, k)
						s, ok := stripNumbered(rest, ids)
						if !ok {
							return nil, false
						}
						rows[i] = s
						continue
					}
				}
			}
			s, ok := stripNumbered(e, ids)
			if !ok {
				return nil, false
			}
			rows[i] = s
		}
		switch numbered {
		case 0:
			return rows, true
		case len(x):
			keys := make([]string, len(rows))
			for i, r := range rows {
				keys[i] = encode(r)
			}
			slices.Sort(keys)
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = json.RawMessage(k)
			}
			return out, true
		}
		return nil, false
	}
	return v, true
}

// holdsNumber reports whether v holds, outside the rows whose ids were left
// out, a number among ids (as a number or as text).
func holdsNumber(v any, ids map[string]int) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if holdsNumber(e, ids) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if _, raw := e.(json.RawMessage); raw {
				continue // a numbered row: what it holds travels with it
			}
			if holdsNumber(e, ids) {
				return true
			}
		}
	case json.Number:
		return ids[x.String()] > 0
	case string:
		return ids[x] > 0
	}
	return false
}

// wholeNumber reports whether n is written as a whole number (1, 42; not
// 1.5 or 1e3), as a sink's row numbers are.
func wholeNumber(n json.Number) bool {
	_, err := n.Int64()
	return err == nil
}

// sinkRenaming pairs the names the sink handed this run (run) with those
// it handed the baseline (base): the strings with a digit that the
// successful write calls of one op, identity and arguments answered, one
// call in the baseline and, in the run, every call of the key answering
// the same (an upsert's repeat answers the ticket the first opened). Nil
// when nothing pairs, or the pairs are not one to one.
func sinkRenaming(run, base *Trace) map[string]string {
	rb := writeResults(base)
	if len(rb) == 0 {
		return nil
	}
	// The run's answers by key: each is paired with the baseline's one on
	// its own, so that two calls of a key answering the same name pair it
	// once, whatever else differs between them (a get-or-create's
	// "created", true for one delivery and false for the other: red
	// team, /tmp/rt28pg p2), and two answering two names for the
	// baseline's one pair nothing (pairNames: one to one).
	type answer struct {
		key string
		v   any
	}
	var ra []answer
	for i := range run.Ops {
		o := &run.Ops[i]
		if o.Kind != KindWrite || o.Status != StatusSuccess || o.Result == nil {
			continue
		}
		c, err := Canonical(o.Result)
		if err != nil {
			continue
		}
		if v, err := decodeState(c); err == nil {
			ra = append(ra, answer{opKey(o), v})
		}
	}
	// Rounds: a call given a name the sink answered earlier (open_task
	// under the ticket's id) has another key in the run than in the
	// baseline, until that name is read in the baseline's.
	to, from := map[string]string{}, map[string]string{}
	paired := make([]bool, len(ra))
	for round := 0; round < 4; round++ {
		var quoted []string
		for x, y := range to {
			quoted = append(quoted, encode(x), encode(y))
		}
		rk := strings.NewReplacer(quoted...)
		grew := false
		for i, a := range ra {
			if paired[i] {
				continue
			}
			y, ok := rb[rk.Replace(a.key)]
			if !ok {
				continue
			}
			paired[i] = true
			n := len(to)
			if !pairNames(a.v, y, to, from) || !pairSame(a.v, y, to, from) {
				return nil
			}
			grew = grew || len(to) > n
		}
		if !grew {
			break
		}
	}
	for x, y := range to {
		// A name, not a number written as text: a count of "2" beside
		// the run's row "2" would be renamed with it. A name kept is no
		// renaming.
		if x == y || !hasDigit(x) || !hasDigit(y) || shortNumber(x) || shortNumber(y) {
			delete(to, x)
		}
	}
	if len(to) == 0 {
		return nil
	}
	return to
}

// pairSame records in to and from, as names kept, the strings that x and
// y hold alike at one place, and reports false where one is already paired
// with another: a run whose answers were T-0001 and T-0002 against the
// baseline's T-0001 would otherwise rename T-0002 onto the T-0001 it also
// holds, two rows made one (review of a1702ab).
func pairSame(x, y any, to, from map[string]string) bool {
	switch xv := x.(type) {
	case string:
		if yv, ok := y.(string); ok && xv == yv {
			if t, ok := to[xv]; ok && t != xv {
				return false
			}
			if f, ok := from[xv]; ok && f != xv {
				return false
			}
			to[xv], from[xv] = xv, xv
		}
	case map[string]any:
		if yv, ok := y.(map[string]any); ok {
			for k, e := range xv {
				if f, ok := yv[k]; ok && !pairSame(e, f, to, from) {
					return false
				}
			}
		}
	case []any:
		if yv, ok := y.([]any); ok && len(xv) == len(yv) {
			for i := range xv {
				if !pairSame(xv[i], yv[i], to, from) {
					return false
				}
			}
		}
	}
	return true
}

// shortNumber reports whether s is a number written as text of fewer than
// six characters: a count or a quantity ("2"), where a longer one the sink
// answered is a random id ("486024": red team, /tmp/rt39 r5, a false
// duplicate_write on every run while such ids were left out).
func shortNumber(s string) bool { return len(s) < 6 && isNumber(s) }

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// normState returns snapshot s as encode writes it ("" when it does not
// decode), for comparison with renamedState's.
func normState(s string) string {
	v, err := decodeState(s)
	if err != nil {
		return ""
	}
	return encode(v)
}

// renamedState returns snapshot s with every string and key that rename
// maps renamed, as encode writes it ("-" when it does not decode, which
// equals no normState). A name of eight characters or more (a UUID, an
// order number) is renamed within longer strings too (a title that
// quotes it); a shorter one only whole.
func renamedState(s string, rename map[string]string) string {
	if _, err := decodeState(s); err != nil {
		return "-"
	}
	// Longest first, then in order: where one name holds another, the
	// longer is replaced, on every run alike.
	var long []string
	for x := range rename {
		if len(x) >= 8 {
			long = append(long, x)
		}
	}
	slices.SortFunc(long, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	pairs := make([]string, 0, 2*len(long))
	for _, x := range long {
		pairs = append(pairs, x, rename[x])
	}
	r := strings.NewReplacer(pairs...)
	out, whole := mapText(s, func(t string) string {
		if y, ok := rename[t]; ok {
			return y
		}
		return r.Replace(t)
	}, true)
	if !whole {
		return "-" // two members under one name: no renaming
	}
	return out
}

// sameInBaseNames reports whether the run's snapshot run, its names read in
// the baseline's (rename), holds what the baseline's snapshot base holds,
// lists in any order: rows a table reads by an id the sink gave at random
// come in another order under other ids.
func sameInBaseNames(base, run string, rename map[string]string) bool {
	r, b := renamedState(run, rename), normState(base)
	return r == b || r != "-" && b != "" && sameUpToOrder(r, b)
}
