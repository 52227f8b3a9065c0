package runtime

import "testing"

// A sink that numbers in order, reset by Setup, answered T-0001 in the
// baseline and T-0001 and T-0002 to two creates of the run (a second
// ticket). T-0002 is no renaming of T-0001, which the run also holds:
// read so, two of the run's tickets became one and the end looked like
// the baseline's, which of the two was kept varying from run to run
// (review of a1702ab). And two names renamed onto one key do not make one
// member of two.
func TestSinkRenamingKeepsTheNamesTheRunAlsoHolds(t *testing.T) {
	write := func(id, ident, result string) Operation {
		return Operation{ID: id, Name: "open_ticket", Kind: KindWrite, Status: StatusSuccess, Identity: ident, Result: result}
	}
	base := &Trace{Ops: []Operation{write("1:open_ticket#1", `"a"`, "T-0001")}}
	run := &Trace{Ops: []Operation{write("1:open_ticket#1", `"a"`, "T-0001"), write("2:open_ticket#2", `"a"`, "T-0002")}}
	if rn := sinkRenaming(run, base); rn != nil {
		t.Errorf("sinkRenaming = %v, want nil: the run holds T-0001 too", rn)
	}
	run = &Trace{Ops: []Operation{write("1:open_ticket#1", `"a"`, "T-0002")}}
	if rn := sinkRenaming(run, base); rn["T-0002"] != "T-0001" {
		t.Errorf("sinkRenaming = %v, want T-0002 read as T-0001", rn)
	}
	if got := renamedState(`{"tickets":{"T-0001":"open","T-0002":"closed"}}`, map[string]string{"T-0002": "T-0001"}); got != "-" {
		t.Errorf("renamedState = %s, want - (two tickets under one name)", got)
	}
	if got := renamedState(`{"tickets":{"T-0002":"closed"}}`, map[string]string{"T-0002": "T-0001"}); got != `{"tickets":{"T-0001":"closed"}}` {
		t.Errorf("renamedState = %s", got)
	}
}

// A random id the sink answers as digits written as text ("486024") is a
// name like any other; a short number written as text ("2") stays a
// count, and is no renaming (red team, /tmp/rt39 r5: ids of six digits
// were left out, and every move among them read as a second effect).
func TestSinkRenamingTakesLongDigitStringsForNames(t *testing.T) {
	write := func(result string) *Trace {
		return &Trace{Ops: []Operation{{ID: "1:enqueue#1", Name: "enqueue", Kind: KindWrite, Status: StatusSuccess, Identity: `"a"`, Result: result}}}
	}
	if rn := sinkRenaming(write("486024"), write("905519")); rn["486024"] != "905519" {
		t.Errorf("sinkRenaming = %v, want 486024 read as 905519", rn)
	}
	if rn := sinkRenaming(write("3"), write("2")); rn != nil {
		t.Errorf("sinkRenaming = %v, want nil: a short number is a count", rn)
	}
}
