package runtime

import (
	"strings"
	"testing"
)

// TestVisiblyOrdered: lists that an ORDER BY over the entries' own fields
// would give, and lists that only data State does not show orders.
func TestVisiblyOrdered(t *testing.T) {
	rows := func(s string) []any {
		v, err := decodeState(s)
		if err != nil {
			t.Fatal(err)
		}
		return v.([]any)
	}
	for _, c := range []struct {
		name  string
		lists []string
		want  bool
	}{
		{"by id", []string{`[{"id":"a1","n":3},{"id":"b2","n":1},{"id":"c3","n":2}]`}, true},
		{"by number, descending", []string{`[{"id":"z","n":3},{"id":"a","n":2},{"id":"q","n":1}]`}, true},
		{"numbers as numbers, not text", []string{`[{"n":2},{"n":10},{"n":100}]`}, true},
		{"by status, then id", []string{
			`[{"id":"q","status":"open"},{"id":"x","status":"open"},{"id":"b","status":"resolved"}]`,
			`[{"id":"c","status":"open"},{"id":"a","status":"resolved"},{"id":"k","status":"resolved"}]`,
		}, true},
		{"nulls first", []string{`[{"slug":null},{"slug":"alpha"},{"slug":"beta"}]`}, true},
		{"nulls last", []string{`[{"slug":"alpha"},{"slug":"beta"},{"slug":null}]`}, true},
		{"text without case", []string{`[{"name":"apple"},{"name":"Banana"},{"name":"cherry"}]`}, true},
		{"letters and digits alone", []string{`[{"name":"build-a"},{"name":"builda2"},{"name":"build b"}]`}, true},
		{"scalars", []string{`["a","b","c"]`, `[1,2,3]`}, true},
		{"numbers written as text, as numbers", []string{`[{"id":"9"},{"id":"10"},{"id":"100"}]`}, true},
		{"equal entries in any order", []string{`[{"k":1},{"k":1},{"k":0}]`}, true},
		{"one list each way", []string{`[{"id":"a"},{"id":"b"}]`, `[{"id":"b"},{"id":"a"}]`}, false},
		{"by a priority not shown, ties by id", []string{
			`[{"id":"m","name":"build-a"},{"id":"c","name":"build-b"},{"id":"k","name":"build-x"},{"id":"q","name":"build-y"},{"id":"e","name":"build-d"}]`,
		}, false},
		// What no scalar field tells apart is taken as ordered: where it
		// cannot tell, the verdict does not look closer.
		{"apart only in a nested list", []string{`[{"k":1,"tags":["b"]},{"k":1,"tags":["a"]}]`, `[{"k":1,"tags":["a"]},{"k":1,"tags":["b"]}]`}, true},
	} {
		var lists [][]any
		for _, l := range c.lists {
			lists = append(lists, rows(l))
		}
		if got := visiblyOrdered(lists...); got != c.want {
			t.Errorf("%s: visiblyOrdered = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSlotsAgree: where a change leaves an entry among the entries neither
// run changed, in a list no field orders, and nothing where a field does.
func TestSlotsAgree(t *testing.T) {
	q := func(rows ...string) string {
		out := `{"q":[`
		for i, r := range rows {
			if i > 0 {
				out += ","
			}
			id, s, _ := strings.Cut(r, ":")
			out += `{"id":"` + id + `","s":"` + s + `"}`
		}
		return out + "]}"
	}
	// A queue by a priority State does not show, its ties by id: x and
	// y tie. The run's own names are a, b, p (y), q (x) and e (d), so its
	// ties stand the other way round in the baseline's names.
	before := q("a:queued", "b:queued", "x:queued", "y:queued", "d:queued")
	once := q("a:queued", "b:queued", "d:exp", "x:queued", "y:queued")
	runBefore, runBefore2 := q("a:queued", "b:queued", "p:queued", "q:queued", "e:queued"), q("a:queued", "b:queued", "y:queued", "x:queued", "d:queued")
	runOnce, runOnce2 := q("a:queued", "b:queued", "e:exp", "p:queued", "q:queued"), q("a:queued", "b:queued", "d:exp", "y:queued", "x:queued")
	if !slotsAgree(before, once, runBefore, runOnce, runBefore2, runOnce2) {
		t.Error("one boost among ties in another order: the slots differ")
	}
	runTwice, runTwice2 := q("a:queued", "e:exp", "b:queued", "p:queued", "q:queued"), q("a:queued", "d:exp", "b:queued", "y:queued", "x:queued")
	if slotsAgree(before, once, runBefore, runTwice, runBefore2, runTwice2) {
		t.Error("a boost past b, where one boost stops below it: the slots agree")
	}
	// Had the run named d a0, before b, the two could be a tie that the
	// ids order, as x and y are: the double boost passes (a known limit:
	// the states cannot tell the two apart).
	runTwiceA0 := q("a:queued", "a0:exp", "b:queued", "p:queued", "q:queued")
	if !slotsAgree(before, once, runBefore, runTwiceA0, runBefore2, runTwice2) {
		t.Error("d and b in the order of their ids in both runs, as the ties are: not taken for a tie")
	}
	// A priority set to that of two others (m and s, ties by id) lands the
	// job among them as its id falls: between them in the baseline (p),
	// after both in the run (w, where m and s are k and c).
	tieBefore := q("a:queued", "m:queued", "s:queued", "p:queued")
	tieAfter := q("a:queued", "m:queued", "p:set", "s:queued")
	tieRunBefore, tieRunBefore2 := q("a:queued", "c:queued", "k:queued", "w:queued"), q("a:queued", "s:queued", "m:queued", "p:queued")
	tieRunAfter, tieRunAfter2 := q("a:queued", "c:queued", "k:queued", "w:set"), q("a:queued", "s:queued", "m:queued", "p:set")
	if !slotsAgree(tieBefore, tieAfter, tieRunBefore, tieRunAfter, tieRunBefore2, tieRunAfter2) {
		t.Error("a job landing among ties as its random id falls: the slots differ")
	}
	// The befores in one order, so no ties to go by. A job boosted past
	// the one above it, in the order of their ids in both runs by luck,
	// is not taken for a tie; a job set to the priority of three others,
	// landing among the four by its id, in each run elsewhere, is.
	// The job p passes m in the run: the run names p c, before m, and
	// the baseline named it p, after m, so the two stand in the order of
	// their ids in both; but the jobs about them (z1 above, b below) are
	// in no such order, so no run of three ties.
	zBefore := q("z1:queued", "m:queued", "b:queued", "p:queued")
	zRunBefore := q("z1:queued", "m:queued", "b:queued", "c:queued")
	if slotsAgree(zBefore, q("z1:queued", "m:queued", "p:set", "b:queued"), zRunBefore, q("z1:queued", "c:set", "m:queued", "b:queued"), zBefore, q("z1:queued", "p:set", "m:queued", "b:queued")) {
		t.Error("a job past the one above it, the befores in one order, the two in the order of their ids by luck: taken for a tie")
	}
	oneBefore := q("a:queued", "m:queued", "r:queued", "s:queued", "b:queued")
	if !slotsAgree(oneBefore, q("a:queued", "m:queued", "p:set", "r:queued", "s:queued"), oneBefore, q("a:queued", "m:queued", "r:queued", "s:queued", "w:set"), oneBefore, q("a:queued", "m:queued", "r:queued", "s:queued", "p:set")) {
		t.Error("a job landing among three ties by its id, the befores in one order: the slots differ")
	}
	// The same queue under a map keyed by its random id (create_queue
	// answers it): qb in the baseline's names, qr in the run's own. The
	// run's member is the baseline's, and the double boost is seen.
	under := func(key, state string) string { return `{"queues":{"` + key + `":` + state + `}}` }
	if slotsAgree(under("qb", before), under("qb", once), under("qr", runBefore), under("qr", runTwice), under("qb", runBefore2), under("qb", runTwice2)) {
		t.Error("a boost past b, the queue under its random id: the slots agree")
	}
	// Ties ordered by an id State leaves out: the befores show x and y
	// in other orders, and where the job set to their priority lands
	// among them is theirs to decide.
	hb, hr := q("a:queued", "x:queued", "y:queued", "d:queued"), q("a:queued", "y:queued", "x:queued", "d:queued")
	if !slotsAgree(hb, q("a:queued", "x:queued", "d:set", "y:queued"), hr, q("a:queued", "d:set", "y:queued", "x:queued"), hr, q("a:queued", "d:set", "y:queued", "x:queued")) {
		t.Error("a job landing among ties that nothing shown orders: the slots differ")
	}
	// A list in no order at all (ORDER BY random()): entries neither run
	// changed stand in another order after a run than before it, and
	// where the new one stands says nothing.
	shuffled := q("x:queued", "a:queued", "y:queued", "b:queued", "d:exp")
	if !slotsAgree(before, shuffled, runBefore, runTwice, runBefore2, runTwice2) {
		t.Error("a list in no order: the slots differ")
	}
	// Tickets by status and id: the resolved one lands among the others
	// as the ids fall, which the fields show. In the baseline c lands
	// between a and k; the run's c is z in its own names, and lands after
	// k.
	tb := `{"t":[{"id":"c","st":"open"},{"id":"a","st":"resolved"},{"id":"k","st":"resolved"}]}`
	ta := `{"t":[{"id":"a","st":"resolved"},{"id":"c","st":"resolved"},{"id":"k","st":"resolved"}]}`
	rb := `{"t":[{"id":"z","st":"open"},{"id":"a","st":"resolved"},{"id":"k","st":"resolved"}]}`
	ra := `{"t":[{"id":"a","st":"resolved"},{"id":"k","st":"resolved"},{"id":"z","st":"resolved"}]}`
	rb2 := `{"t":[{"id":"c","st":"open"},{"id":"a","st":"resolved"},{"id":"k","st":"resolved"}]}`
	ra2 := `{"t":[{"id":"a","st":"resolved"},{"id":"k","st":"resolved"},{"id":"c","st":"resolved"}]}`
	if !slotsAgree(tb, ta, rb, ra, rb2, ra2) {
		t.Error("a ticket resolved in a list by status and id, among others as the ids fall: the slots differ")
	}
	// The same lists, had no field ordered them (the run's c keeping its
	// name): the resolved ticket stands elsewhere among the others.
	if slotsAgree(tb, ta, rb2, ra2, rb2, ra2) {
		t.Error("a list no field orders, the edited entry elsewhere: the slots agree")
	}
	if !slotsAgree(`not json`, once, runBefore, runTwice, runBefore2, runTwice2) {
		t.Error("a state that does not decode: slotsAgree says no")
	}
}
