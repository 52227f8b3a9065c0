package testkit

import (
	"fmt"
	"testing"
)

// TestReportFileNamesOfManySuitesOfOneTest: every suite of one test gets
// a file of its own, numbered in order, and a name another test took is
// skipped. Before, each name was found by trying every number from 2, so
// the suites of go test -count 1000 cost a quadratic number of tries.
func TestReportFileNamesOfManySuitesOfOneTest(t *testing.T) {
	dir := t.TempDir()
	if got := reportFileName(dir, "TestMany_04"); got != "TestMany_04.json" {
		t.Fatalf("first name %q", got)
	}
	want := []string{"TestMany.json", "TestMany_02.json", "TestMany_03.json", "TestMany_05.json", "TestMany_06.json"}
	for i, w := range want {
		if got := reportFileName(dir, "TestMany"); got != w {
			t.Fatalf("suite %d: %q, want %q", i+1, got, w)
		}
	}
	seen := map[string]bool{}
	for i := range 2000 {
		name := reportFileName(dir, "TestMany")
		if seen[name] {
			t.Fatalf("suite %d got %q twice", i, name)
		}
		seen[name] = true
	}
	if got, want := reportFileName(dir, "TestMany"), fmt.Sprintf("TestMany_%02d.json", 2007); got != want {
		t.Fatalf("after 2,005 suites: %q, want %q", got, want)
	}
	// Another directory numbers on its own.
	if got := reportFileName(t.TempDir(), "TestMany"); got != "TestMany.json" {
		t.Fatalf("in another directory: %q", got)
	}
}
