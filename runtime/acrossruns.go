package runtime

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Describing a difference across runs. What one execution left in the
// baseline and what this run left are compared without the moments each
// run's clock stamped and up to the numbers the sink gave what each made,
// and a finding's message said what describeChange says of the two
// snapshots as they are: a created_at the two runs stamped otherwise
// among the changes, although it is left out of every comparison, and a
// row the sink numbered otherwise in the two runs as removed and added
// again ("added {"id":108,…}, {"id":109,…}, removed {"id":102,…}" for one
// reservation made twice, where nothing was removed; red team rtP #8).

// describeAcrossRuns is describeChange(x, y, limit) for x, a snapshot of
// the baseline, and y, one of this run, read as they are compared: a
// change of a moment no call was given (withoutClocks) is left out, where
// anything else changed; and a row of x that y holds under another name
// the sink gave it (its id, idKey), all else alike but the moments and the
// references to rows so renamed (charge_id), is the row y holds, the
// renaming said once at the end (the baseline's charges 1 is 10 here).
// What is left is y's own: "charges: 1 → 2 entries, added {…"id":11…}".
// Where nothing else is left, describeChange's words stand.
func describeAcrossRuns(x, y string, named map[string]bool, limit int) string {
	raw := describeChange(x, y, limit)
	if raw == "" || !holdsClock(x) && !holdsClock(y) && !strings.Contains(raw, "removed") {
		return raw // nothing to read otherwise: no moment, no row given up
	}
	a, errA := decodeState(x)
	b, errB := decodeState(y)
	if errA != nil || errB != nil {
		return raw
	}
	clockless := func(v any) any {
		s := encode(v)
		if !holdsClock(s) {
			return v
		}
		if d, err := decodeState(withoutClocks(s, named)); err == nil {
			return d
		}
		return v
	}
	bc := clockless(b)
	a, renamed := inRunsNames(a, b, clockless(a), bc, clockless)
	var parts, kept []string
	diffValue("", a, b, &parts, true)
	diffValue("", clockless(a), bc, &kept, true)
	paths := map[string]bool{}
	for _, p := range kept {
		paths[partPath(p)] = true
	}
	var out []string
	for _, p := range parts {
		if paths[partPath(p)] {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return raw
	}
	if len(renamed) > 0 {
		const most = 3
		more := ""
		if len(renamed) > most {
			renamed, more = renamed[:most], ", …"
		}
		out = append(out, "the rest alike under the numbers the sink gave: the baseline's "+strings.Join(renamed, ", ")+more)
	}
	return clip(strings.Join(out, "; "), limit)
}

// partPath returns the path a part of describeChange speaks of (what
// precedes its first ": ").
func partPath(p string) string {
	path, _, _ := strings.Cut(p, ": ")
	return path
}

// inRunsNames returns a (the baseline's snapshot, decoded; ac is it with
// its moments left out, bc y's) with each row of a list that y's list at
// the same place does not hold, and that is, less its id (idKey) and its
// moments, a row y holds there that a does not, replaced by that row of
// y: the row under the name this run's sink gave it. References to a row
// so renamed (a receipt's charge_id, in a list whose key reads as a
// reference to that list's rows: refTarget, readsAsRowOf) are read in
// y's names first, so a receipt under the renamed charge is renamed too.
// It returns the renamings in words ("charges 1 is 10 here"), in the
// order found.
func inRunsNames(a, b, ac, bc any, clockless func(any) any) (any, []string) {
	var words []string
	refs := map[string]map[string]string{} // by list (lower case): a's id's text → y's
	// Three rounds: a receipt under a charge under an order.
	for range 3 {
		grew := false
		var walk func(path []string, a, b, ac, bc any) any
		walk = func(path []string, a, b, ac, bc any) any {
			switch x := a.(type) {
			case map[string]any:
				y, _ := b.(map[string]any)
				xc, _ := ac.(map[string]any)
				yc, _ := bc.(map[string]any)
				if y == nil || xc == nil || yc == nil {
					return a
				}
				out := make(map[string]any, len(x))
				for _, k := range slices.Sorted(maps.Keys(x)) { // the renamings said in one order
					v := x[k]
					if w, ok := y[k]; ok {
						out[k] = walk(append(path, k), v, w, xc[k], yc[k])
					} else {
						out[k] = v
					}
				}
				return out
			case []any:
				y, _ := b.([]any)
				xc, _ := ac.([]any)
				yc, _ := bc.([]any)
				if len(path) == 0 || y == nil || len(xc) != len(x) || len(yc) != len(y) {
					return a
				}
				coll := strings.ToLower(path[len(path)-1])
				held := map[string]int{}
				for _, r := range yc {
					held[encode(r)]++
				}
				had := map[string]int{}
				for _, r := range xc {
					had[encode(r)]++
				}
				// y's rows that x does not hold, less their ids.
				var free []int
				for i, r := range yc {
					if k := encode(r); had[k] > 0 {
						had[k]--
					} else if _, ok := r.(map[string]any); ok {
						free = append(free, i)
					}
				}
				out := make([]any, len(x))
				copy(out, x)
				for i, r := range xc {
					m, ok := r.(map[string]any)
					if k := encode(r); !ok || held[k] > 0 {
						if ok {
							held[k]--
						}
						continue
					}
					id := idKey(m)
					if id == "" {
						continue
					}
					want := encode(withoutColumn(followIn(m, refs), -1))
					for j, f := range free {
						n, _ := yc[f].(map[string]any)
						if idKey(n) != id || encode(withoutColumn(n, -1)) != want {
							continue
						}
						out[i] = y[f]
						free = append(free[:j], free[j+1:]...)
						from, _ := scalarText(m[id])
						to, _ := scalarText(n[id])
						if from != to {
							if refs[coll] == nil {
								refs[coll] = map[string]string{}
							}
							if _, done := refs[coll][from]; !done {
								refs[coll][from] = to
								words = append(words, fmt.Sprintf("%s %s is %s here", coll, from, to))
								grew = true
							}
						}
						break
					}
				}
				return out
			}
			return a
		}
		a = walk(nil, a, b, ac, bc)
		ac = clockless(a)
		if !grew {
			break
		}
	}
	return a, words
}

// followIn returns row m with each reference (a scalar under a key that
// reads as one, refTarget) to a row that refs renames, in a list whose
// name reads as the reference's target (readsAsRowOf), in the new name.
func followIn(m map[string]any, refs map[string]map[string]string) any {
	if len(refs) == 0 {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
		to := refTarget(k)
		t, ok := scalarText(v)
		if to == "" || !ok || k == idKey(m) {
			continue
		}
		for coll, names := range refs {
			if n, ok := names[t]; ok && readsAsRowOf(coll, to) {
				out[k] = sameKind(v, n)
				break
			}
		}
	}
	return out
}

// sameKind returns text as a value of v's kind: a number where v is one.
func sameKind(v any, text string) any {
	if _, num := v.(json.Number); num {
		return json.Number(text)
	}
	return text
}
