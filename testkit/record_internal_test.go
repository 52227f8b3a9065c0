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

// Without eager subtests, a failing scenario whose every error is of a
// kind of problem (its code and ops) that an earlier scenario's subtest
// fails with, for this identity or another, gets no subtest
// (reportResult). A kind first shown as a warning still fails the first
// scenario that shows it as an error, and a new kind fails its scenario
// whatever else it shows. The summary says where a problem not printed
// under its first scenario was printed, and replays that scenario.
func TestRepeatedProblemHasNoSubtestOfItsOwn(t *testing.T) {
	finding := func(scenario, op, ident string, sev runtime.Severity) runtime.Finding {
		return runtime.Finding{Code: runtime.CodeDuplicateWrite, Severity: sev, Scenario: scenario, Replay: "replay " + scenario,
			Ops: []string{op}, Identities: []string{ident}, Message: op + " twice for " + ident}
	}
	printed := map[string]string{}
	var all []runtime.Finding
	for _, c := range []struct {
		scenario string
		findings []runtime.Finding
		fails    bool
		prints   string // what its subtest prints, when it has one
	}{
		{"a", []runtime.Finding{finding("a", "post", "k", runtime.SeverityError)}, true, "post twice for k"},
		{"b", []runtime.Finding{finding("b", "post", "k", runtime.SeverityError)}, false, ""},
		// k2 is post's problem for another identity: c is folded.
		{"c", []runtime.Finding{finding("c", "post", "k", runtime.SeverityError), finding("c", "post", "k2", runtime.SeverityError)}, false, ""},
		{"d", []runtime.Finding{finding("d", "put", "w", runtime.SeverityWarning)}, false, ""},
		// d had no subtest: e prints put's problem in full, not a
		// pointer to d.
		{"e", []runtime.Finding{finding("e", "put", "w", runtime.SeverityError)}, true, "put twice for w"},
		{"f", []runtime.Finding{finding("f", "put", "w", runtime.SeverityError), finding("f", "post", "k2", runtime.SeverityError)}, false, ""},
		// A new kind fails g, which prints k3's problem in full too, and
		// points back to a for k.
		{"g", []runtime.Finding{finding("g", "post", "k", runtime.SeverityError), finding("g", "post", "k3", runtime.SeverityError), finding("g", "send", "m", runtime.SeverityError)}, true, "post twice for k3"},
	} {
		all = append(all, c.findings...)
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
			if c.scenario == "g" && !strings.Contains(out.text, "post for identity k, as in a (printed there)") {
				t.Errorf("scenario g: its subtest printed %q, want k's problem to point back to a", out.text)
			}
		}
	}
	rep := &runtime.Report{Problems: runtime.GroupFindings(all)}
	summary := testSummary(rep, true, printed)
	for _, want := range []string{
		"problems (each printed in full under the first scenario that shows it, unless its line says where):",
		"post for identity k: a, b, c, g\n          replay b (",
		"post for identity k2: c, f\n          printed in full for another identity under a; replay c (",
		"put for identity w: d, e, f\n          printed in full under e; replay d (",
		"post for identity k3: g\n",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary has no %q:\n%s", want, summary)
		}
	}
	// Every scenario had its subtest (eager): nothing to say where.
	if s := testSummary(rep, false, nil); strings.Contains(s, "; replay") || strings.Contains(s, "unless its line says where") {
		t.Errorf("the eager summary says where a problem was printed:\n%s", s)
	}
	// testkit.Run (fail false) fails no scenario.
	res := &runtime.Result{Findings: []runtime.Finding{finding("g", "post", "new", runtime.SeverityError)}}
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
