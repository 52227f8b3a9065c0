package booking

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEFaultErrorSnippetIsTheExample keeps the code the README shows
// under "What error a fault returns" equal to the example it says it is
// from, which runs.
func TestREADMEFaultErrorSnippetIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	i := strings.Index(text, "What error a fault returns.")
	if i < 0 {
		t.Fatal(`README has no "What error a fault returns" paragraph`)
	}
	m := regexp.MustCompile("From `([^`]+)`:\\s*```go\\n((?s:.*?))```").FindStringSubmatch(text[i:])
	if m == nil || m[1] != "examples/booking/example_test.go" {
		t.Fatal("the paragraph shows no go block taken from examples/booking/example_test.go")
	}
	src, err := os.ReadFile("../../" + m[1])
	if err != nil {
		t.Fatal(err)
	}
	if want, have := trimmed(m[2]), trimmed(string(src)); !strings.Contains(have, want) {
		t.Errorf("README's block is not in %s as it is:\n%s", m[1], want)
	}
}

// trimmed is s's non-empty lines, trimmed, joined.
func trimmed(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
