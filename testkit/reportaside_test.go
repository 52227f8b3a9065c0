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

// A suite that ends before its report (t.Fatal in a Setup ends the test's
// goroutine) leaves no file it made, and an earlier run's file as it was.
func TestSuiteEndedEarlyLeavesNoReportFileOfItsOwn(t *testing.T) {
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
		go func() { // the test's goroutine, as far as Goexit goes
			defer close(done)
			var l *tools.Ledger
			setups := 0
			testkit.Run(&fakeT{name: "TestEnded"}, retrier(&l), testkit.Setup(func(context.Context) error {
				if setups++; setups == 2 {
					goruntime.Goexit() // t.Fatal in the first scenario's Setup
				}
				l = &tools.Ledger{}
				return nil
			}), testkit.ReportDir(dir), testkit.NoSummary())
		}()
		<-done
		got, err := os.ReadFile(path)
		switch {
		case !earlier && !os.IsNotExist(err):
			t.Errorf("no earlier file: the suite that ended early left %s (%v, %d bytes)", path, err, len(got))
		case earlier && (err != nil || !bytes.Equal(got, old)):
			t.Errorf("the earlier run's file is now %q (%v), want it as it was", got, err)
		}
	}
}
