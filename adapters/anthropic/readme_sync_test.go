package agentidemanthropic_test

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsTheTestedFile keeps the README's test listing equal to
// readme_test.go, so the copy-paste start always compiles and passes.
func TestREADMEShowsTheTestedFile(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	block := "```go\n" + strings.TrimRight(string(src), "\n") + "\n```"
	if !strings.Contains(string(readme), block) {
		t.Error("README.md does not show readme_test.go as it is: paste the file into its go block")
	}
}
