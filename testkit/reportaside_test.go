package testkit_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// The report file is opened while the suite runs, and written at its end:
// the file holds the suite's report, byte for byte, whether it was made
// for it or left by an earlier run (longer than the new report).
func TestReportFileOpenedWhileTheSuiteRunsHoldsTheReport(t *testing.T) {
	for _, earlier := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "testkit", "TestAside.json") // under the package's directory (reportDir)
		if earlier {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 1<<20), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var l *tools.Ledger
		rep := testkit.Run(&fakeT{name: "TestAside"}, retrier(&l),
			testkit.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil }),
			testkit.ReportDir(dir), testkit.NoSummary())
		var want bytes.Buffer
		if err := rep.WriteJSON(&want); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("earlier file %v: the file holds %d bytes, want the report's %d", earlier, len(got), want.Len())
		}
	}
}

// A suite whose Setup ends the test's goroutine (t.Fatal, here a plain
// runtime.Goexit) stops there, and its report is written all the same:
// the scenarios it did not run counted inconclusive and a note naming the
// Setup that ended it (callbackexit.go; before, the suite left no file of
// its own and an earlier run's file as it was, red team rtV #20), in
// place of an earlier run's file.
func TestSuiteEndedBySetupStillWritesItsReport(t *testing.T) {
	for _, earlier := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "testkit", "TestEnded.json")
		old := []byte(`{"earlier": true}`)
		if earlier {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, old, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan struct{})
		ft := &fakeT{name: "TestEnded"}
		go func() { // the test's goroutine, as far as Goexit goes
			defer close(done)
			var l *tools.Ledger
			setups := 0
			testkit.Run(ft, retrier(&l), testkit.Setup(func(context.Context) error {
				if setups++; setups == 2 {
					goruntime.Goexit() // t.Fatal in the first scenario's Setup
				}
				l = &tools.Ledger{}
				return nil
			}), testkit.ReportDir(dir), testkit.NoSummary())
		}()
		<-done
		got, err := os.ReadFile(path)
		if err != nil || bytes.Equal(got, old) {
			t.Fatalf("earlier %v: the report file is %q (%v), want the stopped suite's report", earlier, got, err)
		}
		if !bytes.Contains(got, []byte(`Setup called runtime.Goexit at reportaside_test.go:`)) || !bytes.Contains(got, []byte(`not run: cut short: Setup called runtime.Goexit`)) {
			t.Errorf("earlier %v: the report does not say the Setup stopped the suite:\n%s", earlier, got)
		}
	}
}
