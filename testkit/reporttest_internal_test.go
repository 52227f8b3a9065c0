package testkit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// reportTest reads a report's name: from its line in a file WriteJSON
// wrote, whose other members named "name" (a call's argument, a finding's
// detail) are deeper; from the whole JSON in another file (MarshalJSON's,
// on one line); and "" from a file that is no report.
func TestReportTestReadsTheReportsName(t *testing.T) {
	rep, err := runtime.Run(context.Background(), "TestOwner_02", func(context.Context) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	rep.Results = append(rep.Results, &runtime.Result{Scenario: "s", Trace: &runtime.Trace{Name: "not this"}})
	dir := t.TempDir()
	var indented bytes.Buffer
	if err := rep.WriteJSON(&indented); err != nil {
		t.Fatal(err)
	}
	compact, err := rep.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, text, want string
	}{
		{"indented", indented.String(), "TestOwner_02"},
		{"compact", string(compact), "TestOwner_02"},
		{"not a report", `{"results": []}`, ""},
		{"not JSON", "plain text", ""},
	} {
		path := filepath.Join(dir, c.name+".json")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := reportTest(path); got != c.want {
			t.Errorf("%s: reportTest = %q, want %q", c.name, got, c.want)
		}
	}
}
