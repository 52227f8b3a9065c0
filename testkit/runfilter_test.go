package testkit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// filterT is a TB whose subtests run only when go test's -run would select
// them: run says which full names do.
type filterT struct {
	name   string
	run    func(name string) bool
	parent *filterT
	errors []string
}

func (f *filterT) Helper()      {}
func (f *filterT) Name() string { return f.name }
func (f *filterT) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for p := f; p != nil; p = p.parent {
		p.errors = append(p.errors, msg)
	}
}
func (f *filterT) Logf(string, ...any) {}
func (f *filterT) Run(name string, fn func(testkit.TB)) bool {
	sub := &filterT{name: f.name + "/" + name, run: f.run, parent: f}
	if !f.run(sub.name) {
		return true // filtered out, as -run does: not run, not failed
	}
	fn(sub)
	return len(sub.errors) == 0
}

// A replay line's -run selects one scenario's subtest. The baseline still
// runs (every scenario is planned from it), but its subtest is filtered
// out, and so are its findings: they are the baseline's, not the replayed
// scenario's. Before, TestAgent printed every finding no subtest had
// printed after the report, and failed the replay on the baseline's
// duplicate post.
func TestReplayOfOneScenarioIsNotFailedByAnother(t *testing.T) {
	var l *tools.Ledger
	twice := func(ctx context.Context) error { // posts twice without any fault
		for range 2 {
			if err := l.PostTraced(ctx, "entry-1", "hello"); err != nil {
				return err
			}
		}
		return nil
	}
	ft := &filterT{name: "TestLedger", run: func(name string) bool {
		return strings.HasPrefix(name, "TestLedger/lost_acknowledgement/post#1") ||
			strings.HasPrefix("TestLedger/lost_acknowledgement/post#1", name)
	}}
	rep := testkit.TestAgent(ft, twice, ledgerSetup(&l), testkit.NoSummary())
	if !rep.Baseline.Safe && len(rep.Baseline.Findings) == 0 {
		t.Fatal("fixture: the baseline has no finding")
	}
	// The lost acknowledgement stops the agent after one post: that
	// scenario is clean.
	if len(ft.errors) != 0 {
		t.Errorf("the filtered-out baseline's findings failed the test:\n%s", strings.Join(ft.errors, "\n"))
	}

	// Selected, the baseline fails as before.
	ft = &filterT{name: "TestLedger", run: func(string) bool { return true }}
	testkit.TestAgent(ft, twice, ledgerSetup(&l), testkit.NoSummary())
	if !strings.Contains(strings.Join(ft.errors, "\n"), "post executed 2 times") {
		t.Errorf("unfiltered, the baseline's duplicate does not fail the test: %q", ft.errors)
	}
}
