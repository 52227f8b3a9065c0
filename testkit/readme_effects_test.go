package testkit_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEEffectsSnippetIsTheTestedCode keeps the code the README shows in
// "Effects, not executions" equal to the test it says it is from, which
// runs (examples/tickets TestAsyncAgentPassesTheFaultSuite).
func TestREADMEEffectsSnippetIsTheTestedCode(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	i := strings.Index(text, "### Effects, not executions")
	if i < 0 {
		t.Fatal(`README has no "Effects, not executions" section`)
	}
	section := text[i:]
	if j := strings.Index(section[4:], "\n#"); j >= 0 {
		section = section[:j+4]
	}
	m := regexp.MustCompile("From `([^`]+)`:\\s*```go\\n((?s:.*?))```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("the section shows no go block taken from a file")
	}
	src, err := os.ReadFile("../" + m[1])
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(m[2], "\n") {
		if l = strings.TrimSpace(l); l != "" {
			want = append(want, l)
		}
	}
	var have []string
	for _, l := range strings.Split(string(src), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			have = append(have, l)
		}
	}
	if !strings.Contains(strings.Join(have, "\n"), strings.Join(want, "\n")) {
		t.Errorf("README's block is not in %s as it is:\n%s", m[1], strings.Join(want, "\n"))
	}
}
