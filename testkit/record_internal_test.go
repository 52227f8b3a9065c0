package testkit

import (
	"fmt"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// A failing group's report is written again under go test's subtests
// after the suite ran: record counts the subtests it will make, which
// flush tells the runtime's census of goroutines, one goroutine each and
// one for the group (runtime.HarnessGoroutines). A count off by one makes
// the next suite's baseline dump the stacks of the process again.
func TestFlushStartsTheGoroutinesRecordCounted(t *testing.T) {
	d := record("group", func(gt TB) {
		for _, name := range []string{"a#1", "a#2", "a#3"} {
			runSubtest(gt, name, func(st TB) { st.Logf("printed") })
		}
	})
	if d.failed || d.subtests != 3 {
		t.Fatalf("record saw failed=%v and %d subtests, want false and 3", d.failed, d.subtests)
	}
	d.failed = true // flushed as a failing group is, without failing this test
	created := func() uint64 {
		s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := created()
	d.flush(t)
	after := created()
	if got := after - before; got != uint64(1+d.subtests) {
		t.Fatalf("flushing the group started %d goroutines, want %d (the group and its subtests)", got, 1+d.subtests)
	}
}

// Without eager subtests, a failing scenario whose every error is a
// problem that an earlier scenario's subtest fails with gets no subtest
// (reportResult). A problem first shown as a warning still fails the
// first scenario that shows it as an error, and a new problem fails its
// scenario whatever else it shows.
func TestRepeatedProblemHasNoSubtestOfItsOwn(t *testing.T) {
	finding := func(scenario, ident string, sev runtime.Severity) runtime.Finding {
		return runtime.Finding{Code: runtime.CodeDuplicateWrite, Severity: sev, Scenario: scenario,
			Ops: []string{"post"}, Identities: []string{ident}, Message: "post twice for " + ident}
	}
	printed := map[string]string{}
	for _, c := range []struct {
		scenario string
		findings []runtime.Finding
		fails    bool
		prints   string // what its subtest prints, when it has one
	}{
		{"a", []runtime.Finding{finding("a", "k", runtime.SeverityError)}, true, "post twice for k"},
		{"b", []runtime.Finding{finding("b", "k", runtime.SeverityError)}, false, ""},
		{"c", []runtime.Finding{finding("c", "k", runtime.SeverityError), finding("c", "k2", runtime.SeverityError)}, true, "as in a (printed there)"},
		{"d", []runtime.Finding{finding("d", "w", runtime.SeverityWarning)}, false, ""},
		// d had no subtest: e prints the problem in full, not a
		// pointer to d.
		{"e", []runtime.Finding{finding("e", "w", runtime.SeverityError)}, true, "post twice for w"},
		{"f", []runtime.Finding{finding("f", "w", runtime.SeverityError), finding("f", "k2", runtime.SeverityError)}, false, ""},
	} {
		res := &runtime.Result{Scenario: c.scenario, Findings: c.findings}
		report := func(st TB) { reportResult(st, res, true, printed) }
		d := record(c.scenario, report)
		if d.failed != c.fails {
			t.Errorf("scenario %s: its report fails = %v, want %v", c.scenario, d.failed, c.fails)
		}
		if d.failed { // as flush makes its subtest
			out := &lines{}
			report(out)
			if !strings.Contains(out.text, c.prints) || !out.failed {
				t.Errorf("scenario %s: its subtest printed %q (failed %v), want it to fail with %q", c.scenario, out.text, out.failed, c.prints)
			}
		}
	}
	// testkit.Run (fail false) fails no scenario.
	res := &runtime.Result{Findings: []runtime.Finding{finding("g", "new", runtime.SeverityError)}}
	if d := record("g", func(st TB) { reportResult(st, res, false, map[string]string{}) }); d.failed {
		t.Errorf("a report that may not fail the test failed")
	}
}

// lines is a TB that keeps what is printed to it.
type lines struct {
	text   string
	failed bool
}

func (l *lines) Helper()      {}
func (l *lines) Name() string { return "lines" }
func (l *lines) Errorf(format string, args ...any) {
	l.failed = true
	l.text += fmt.Sprintf(format, args...) + "\n"
}
func (l *lines) Logf(format string, args ...any) { l.text += fmt.Sprintf(format, args...) + "\n" }
