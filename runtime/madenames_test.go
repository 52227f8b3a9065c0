package runtime

import "testing"

// Names that creates made are left out of the end-state comparison only
// where nothing but the order of the creates can have chosen them.
func TestSameUpToMadeNames(t *testing.T) {
	// Two tickets, opened one at a time in the baseline: printer first.
	tickets := [][2]string{
		{`{}`, `{"T-1":"printer"}`},
		{`{"T-1":"printer"}`, `{"T-1":"printer","T-2":"vpn"}`},
	}
	rows := [][2]string{
		{`{"t":[]}`, `{"t":[[1,"printer","open"]]}`},
		{`{"t":[[1,"printer","open"]]}`, `{"t":[[1,"printer","open"],[2,"vpn","open"]]}`},
	}
	for _, c := range []struct {
		name         string
		windows      [][2]string
		named        []string
		end, baseEnd string
		same         bool
	}{
		{"swapped numbers", tickets, []string{"printer", "vpn"},
			`{"T-1":"vpn","T-2":"printer"}`, `{"T-1":"printer","T-2":"vpn"}`, true},
		{"a second create", tickets, []string{"printer", "vpn"},
			`{"T-1":"vpn","T-2":"printer","T-3":"vpn"}`, `{"T-1":"printer","T-2":"vpn"}`, false},
		{"a name the agent passed (swap T-1 and T-2)", tickets, []string{"printer", "vpn", "T-1", "T-2"},
			`{"T-1":"vpn","T-2":"printer"}`, `{"T-1":"printer","T-2":"vpn"}`, false},
		{"changed after it was made (a swap in the baseline)", tickets, []string{"printer", "vpn"},
			`{"T-1":"printer","T-2":"vpn"}`, `{"T-1":"vpn","T-2":"printer"}`, false},
		{"names that were there before the run", nil, nil,
			`{"a":1,"b":2}`, `{"a":2,"b":1}`, false},
		{"a counter beside them", [][2]string{
			{`{"n":0,"t":{}}`, `{"n":1,"t":{"T-1":"printer"}}`},
			{`{"n":1,"t":{"T-1":"printer"}}`, `{"n":2,"t":{"T-1":"printer","T-2":"vpn"}}`},
		}, []string{"printer", "vpn"},
			`{"n":4,"t":{"T-1":"vpn","T-2":"printer"}}`, `{"n":2,"t":{"T-1":"printer","T-2":"vpn"}}`, false},
		{"rows by INTEGER PRIMARY KEY", rows, []string{"printer", "vpn"},
			`{"t":[[1,"vpn","open"],[2,"printer","open"]]}`, `{"t":[[1,"printer","open"],[2,"vpn","open"]]}`, true},
		{"a second row", rows, []string{"printer", "vpn"},
			`{"t":[[1,"vpn","open"],[2,"printer","open"],[3,"vpn","open"]]}`, `{"t":[[1,"printer","open"],[2,"vpn","open"]]}`, false},
		{"rows whose subject is no argument: two columns could be the name", rows, nil,
			`{"t":[[1,"vpn","open"],[2,"printer","open"]]}`, `{"t":[[1,"printer","open"],[2,"vpn","open"]]}`, false},
		{"rows by id", [][2]string{
			{`[]`, `[{"id":1,"s":"printer"}]`},
			{`[{"id":1,"s":"printer"}]`, `[{"id":1,"s":"printer"},{"id":2,"s":"vpn"}]`},
		}, []string{"printer", "vpn"},
			`[{"id":2,"s":"printer"},{"id":1,"s":"vpn"}]`, `[{"id":1,"s":"printer"},{"id":2,"s":"vpn"}]`, true},
	} {
		named := map[string]bool{}
		for _, n := range c.named {
			named[n] = true
		}
		if got := sameUpToMadeNames(c.end, c.baseEnd, madeBy(c.windows), named); got != c.same {
			t.Errorf("%s: sameUpToMadeNames(%s, %s) = %v, want %v", c.name, c.end, c.baseEnd, got, c.same)
		}
	}
}

// A cluster that opened under T-2 the ticket one execution opened as T-1
// made that execution's change; one that opened two made more.
func TestSameChangeUpToMadeNames(t *testing.T) {
	one := [2]string{`{}`, `{"T-1":"printer"}`}
	for _, c := range []struct {
		name          string
		before, after string
		named         []string
		same          bool
	}{
		{"under another number", `{"T-1":"vpn"}`, `{"T-1":"vpn","T-2":"printer"}`, []string{"printer"}, true},
		{"two tickets", `{"T-1":"vpn"}`, `{"T-1":"vpn","T-2":"printer","T-3":"printer"}`, []string{"printer"}, false},
		{"another subject", `{"T-1":"vpn"}`, `{"T-1":"vpn","T-2":"vpn"}`, []string{"printer"}, false},
		{"a number the agent passed", `{"T-1":"vpn"}`, `{"T-1":"vpn","T-2":"printer"}`, []string{"printer", "T-2"}, false},
		{"a ticket changed beside it", `{"T-1":"vpn"}`, `{"T-1":"closed","T-2":"printer"}`, []string{"printer"}, false},
	} {
		named := map[string]bool{}
		for _, n := range c.named {
			named[n] = true
		}
		if got := sameChangeUpToMadeNames(one[0], one[1], c.before, c.after, named); got != c.same {
			t.Errorf("%s: %s → %s = %v, want %v", c.name, c.before, c.after, got, c.same)
		}
	}
	// Rows of a Go struct with no json tags name themselves by "ID": the
	// row the baseline made as 1, made as 10 under a counter Setup does
	// not reset, is the same change; a second row, another name, or a
	// number the agent passed is not.
	row := [2]string{`null`, `[{"ID":1,"Email":"ada@example.com","Name":"Ada"}]`}
	for _, c := range []struct {
		name  string
		after string
		named []string
		same  bool
	}{
		{"under another number", `[{"ID":10,"Email":"ada@example.com","Name":"Ada"}]`, nil, true},
		{"under another number, Id", `[{"Id":10,"Email":"ada@example.com","Name":"Ada"}]`, nil, false},
		{"two rows", `[{"ID":9,"Email":"ada@example.com","Name":"Ada"},{"ID":10,"Email":"ada@example.com","Name":"Ada"}]`, nil, false},
		{"another name", `[{"ID":10,"Email":"ada@example.com","Name":"Bob"}]`, nil, false},
		{"a number the agent passed", `[{"ID":10,"Email":"ada@example.com","Name":"Ada"}]`, []string{"10"}, false},
	} {
		named := map[string]bool{}
		for _, n := range c.named {
			named[n] = true
		}
		if got := sameChangeUpToMadeNames(row[0], row[1], `null`, c.after, named); got != c.same {
			t.Errorf("rows, %s: null → %s = %v, want %v", c.name, c.after, got, c.same)
		}
	}
	if sameChangeUpToMadeNames(`{"n":0}`, `{"n":1}`, `{"n":1}`, `{"n":2}`, nil) {
		t.Error("an increment again is the same change up to made names")
	}
}

// A row whose status a window set was there before it: its id is not a
// name that window made, and rows whose statuses differ are not one
// renamed.
func TestMadeNamesAreOfInsertedRowsOnly(t *testing.T) {
	windows := [][2]string{
		{`[[1,"a","open"],[2,"b","open"]]`, `[[1,"a","closed"],[2,"b","open"]]`},
		{`[[1,"a","closed"],[2,"b","open"]]`, `[[1,"a","closed"],[2,"b","held"]]`},
	}
	if made := madeBy(windows); len(made) != 0 {
		t.Errorf("made %v, want nothing", made)
	}
	if sameUpToMadeNames(`[[1,"a","held"],[2,"b","closed"]]`, `[[1,"a","closed"],[2,"b","held"]]`, madeBy(windows), nil) {
		t.Error("statuses swapped between rows that were there are the same up to made names")
	}
}
