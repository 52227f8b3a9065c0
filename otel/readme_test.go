package agentidemotel_test

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsTheExample keeps the go block of the README's "In
// production" section equal to the lines of startTracing in example_test.go,
// which Example runs.
func TestREADMEShowsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## In production\n")
	if !ok {
		t.Fatal(`README.md has no "## In production" section`)
	}
	_, block, ok := strings.Cut(section, "```go\n")
	block, _, ok2 := strings.Cut(block, "```\n")
	if !ok || !ok2 {
		t.Fatal(`the "In production" section has no go block`)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, lines, _ := strings.Cut(string(src), "// BEGIN README\n")
	lines, _, _ = strings.Cut(lines, "\t// END README\n")
	var want strings.Builder
	for _, l := range strings.SplitAfter(lines, "\n") {
		want.WriteString(strings.TrimPrefix(l, "\t"))
	}
	if block != want.String() {
		t.Errorf("README.md's go block in \"In production\":\n%s\nwant the lines of startTracing:\n%s", block, want.String())
	}
}
