package agentidemmcp_test

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsTheTestedFiles keeps the README's test listings equal to
// the files that go test runs, so the copy-paste start always compiles and
// passes.
func TestREADMEShowsTheTestedFiles(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"mcpgo/readme_test.go", "gosdk/readme_test.go"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		block := "```go\n" + strings.TrimRight(string(src), "\n") + "\n```"
		if !strings.Contains(string(readme), block) {
			t.Errorf("README.md does not show %s as it is: paste the file into its go block", f)
		}
	}
}
