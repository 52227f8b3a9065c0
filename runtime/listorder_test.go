package runtime

import (
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
	// A queue by a priority State does not show; x and y tie, by id.
	before := `{"q":[{"id":"a","s":"queued"},{"id":"b","s":"queued"},{"id":"x","s":"queued"},{"id":"y","s":"queued"},{"id":"d","s":"queued"}]}`
	tiesSwapped := `{"q":[{"id":"a","s":"queued"},{"id":"b","s":"queued"},{"id":"y","s":"queued"},{"id":"x","s":"queued"},{"id":"d","s":"queued"}]}`
	once := `{"q":[{"id":"a","s":"queued"},{"id":"b","s":"queued"},{"id":"d","s":"expedited"},{"id":"x","s":"queued"},{"id":"y","s":"queued"}]}`
	onceTiesSwapped := `{"q":[{"id":"a","s":"queued"},{"id":"b","s":"queued"},{"id":"d","s":"expedited"},{"id":"y","s":"queued"},{"id":"x","s":"queued"}]}`
	twiceTiesSwapped := `{"q":[{"id":"a","s":"queued"},{"id":"d","s":"expedited"},{"id":"b","s":"queued"},{"id":"y","s":"queued"},{"id":"x","s":"queued"}]}`
	if !slotsAgree(before, once, tiesSwapped, onceTiesSwapped, tiesSwapped, onceTiesSwapped) {
		t.Error("one boost among ties in another order: the slots differ")
	}
	if slotsAgree(before, once, tiesSwapped, twiceTiesSwapped, tiesSwapped, twiceTiesSwapped) {
		t.Error("a boost past b, where one boost stops below it: the slots agree")
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
	if !slotsAgree(`not json`, once, tiesSwapped, twiceTiesSwapped, tiesSwapped, twiceTiesSwapped) {
		t.Error("a state that does not decode: slotsAgree says no")
	}
}
