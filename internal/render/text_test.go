package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

func TestTextNaiveAgent(t *testing.T) {
	rep := naiveReport(t)
	got := Text(rep)
	lines := strings.Split(got, "\n")
	head := fmt.Sprintf("agentidem TestNaiveAgent: UNSAFE — baseline ok, %d fault scenarios (all %d faults fired), 2 duplicate deliveries, 2 of %d unsafe, 0 inconclusive, %d agent runs, ",
		plannedCount(rep), plannedCount(rep), len(rep.Results), rep.AgentRuns)
	if !strings.HasPrefix(lines[0], head) || plannedCount(rep) < 3 || firedCount(rep) != plannedCount(rep) {
		t.Errorf("headline %q, want prefix %q", lines[0], head)
	}
	if len(lines) < 2+len(rep.Results) || lines[1] != "scenarios:" {
		t.Errorf("no scenario lines:\n%s", got)
	}
	for _, want := range []string{
		"\n  ok           baseline  ",
		"\n  UNSAFE       lost_acknowledgement/refund#1      fault refund#1 lost_acknowledgement (fired), 3 calls, 2 error findings",
		"\n  ok           crash_restart/refund#1             fault refund#1 crash_restart (fired), 4 calls",
		"\n  UNSAFE       duplicate_delivery/concurrent      4 calls, 2 error findings",
		"\n  error   duplicate_write        lost_acknowledgement/refund#1\n",
		"\n          op: refund  identity: \"payment-123\"  calls: 1:refund#1, 1:refund#2\n",
		// One finding per problem, with each scenario that shows it.
		"\n          seen in 2 scenarios:\n            lost_acknowledgement/refund#1\n              replay: go test -run '^TestNaiveAgent$/^lost_acknowledgement$/^refund#1$' ./examples/refund\n" +
			"            duplicate_delivery/concurrent\n              replay: go test -run '^TestNaiveAgent$/^duplicate_delivery$/^concurrent$' ./examples/refund",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "error   duplicate_write"); n != 1 {
		t.Errorf("the duplicate refund is printed %d times, want once:\n%s", n, got)
	}
	if strings.Contains(got, "\x1b[") {
		t.Error("colors without the Color option")
	}
	if strings.HasSuffix(got, "\n") {
		t.Error("summary ends with a newline")
	}
}

func TestTextVerdicts(t *testing.T) {
	base := &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true}
	cases := []struct {
		rep  *runtime.Report
		want string
	}{
		{&runtime.Report{Name: "T", Safe: true, BaselineSucceeded: true, Baseline: base}, VerdictSafe},
		{&runtime.Report{Name: "T", BaselineSucceeded: true, Baseline: base, UnsafeCount: 1}, VerdictUnsafe},
		{&runtime.Report{Name: "T", BaselineFailure: "boom", Baseline: base}, VerdictBaselineFailed},
		// No error finding, but a fault never fired: not silently safe.
		{&runtime.Report{Name: "T", Safe: true, BaselineSucceeded: true, InconclusiveCount: 1, Baseline: base}, VerdictInconclusive},
	}
	for _, c := range cases {
		if got := Verdict(c.rep); got != c.want {
			t.Errorf("Verdict = %q, want %q", got, c.want)
		}
		if got := Text(c.rep); !strings.HasPrefix(got, "agentidem T: "+c.want+" — ") {
			t.Errorf("Text starts %q, want the verdict %q", got, c.want)
		}
	}
	if got := Text(cases[2].rep); !strings.Contains(got, "\n  baseline failure: boom") {
		t.Errorf("baseline failure not shown:\n%s", got)
	}
}

func TestTextEscapesControlCharacters(t *testing.T) {
	got := Text(hostileReport())
	if strings.ContainsAny(got, "\x07\x1b\r") {
		t.Errorf("raw control characters reach the terminal: %q", got)
	}
	if !strings.Contains(got, `esc\u001b[31mred`) {
		t.Errorf("escaped control characters not shown:\n%s", got)
	}
}

func TestTextColor(t *testing.T) {
	rep := naiveReport(t)
	got := Text(rep, Color())
	if !strings.Contains(got, ansiRed+"UNSAFE"+ansiReset) {
		t.Errorf("verdict not red:\n%q", got[:120])
	}
	if plain := Text(rep); stripANSI(got) != plain {
		t.Errorf("colored text differs from plain text beyond the colors")
	}
}

func stripANSI(s string) string {
	for _, c := range []string{ansiReset, ansiRed, ansiGreen, ansiYellow, ansiDim} {
		s = strings.ReplaceAll(s, c, "")
	}
	return s
}

// TestFoldPlainOK folds the scenarios that passed with nothing to note into
// one counting line and lists every other one: a finding, an inconclusive
// scenario, a fault that did not fire, a note, a schedule legend, an
// absorbed repeat, and the baseline always.
func TestFoldPlainOK(t *testing.T) {
	fired := &runtime.Fault{Kind: runtime.FaultLostAck, Op: "post", Occurrence: 1}
	plain := func(name string) *runtime.Result {
		return &runtime.Result{Scenario: name, Safe: true, Fault: fired, FaultFired: true, Trace: &runtime.Trace{}}
	}
	absorbed := plain("crash_restart/post#1")
	absorbed.Trace.Ops = []runtime.Operation{{Name: "post"}, {Name: "post", Repeat: runtime.RepeatAbsorbed, JudgedBy: runtime.JudgedByState}}
	noted := plain("crash_restart/post#2")
	noted.Trace.Notes = []string{"a note"}
	unfired := plain("lost_request/post#3")
	unfired.FaultFired, unfired.Inconclusive = false, true
	unfiredSafe := plain("lost_request/post#4")
	unfiredSafe.FaultFired = false
	legend := &runtime.Result{Scenario: "interleaving/s0s1f0f1", Safe: true, Legend: "s0 = post a, s1 = post b", Trace: &runtime.Trace{}}
	gaveUp := plain("lost_acknowledgement/post#2")
	gaveUp.Failed = true
	unsafe := plain("crash_restart/post#3")
	unsafe.Safe = false
	unsafe.Findings = []runtime.Finding{{Code: runtime.CodeDuplicateWrite, Severity: runtime.SeverityError}}
	rep := &runtime.Report{
		Name: "T", BaselineSucceeded: true, UnsafeCount: 1, InconclusiveCount: 1,
		Baseline: &runtime.Result{Scenario: "baseline", Safe: true, Trace: &runtime.Trace{}},
		Results: []*runtime.Result{
			plain("lost_acknowledgement/post#1"), gaveUp, absorbed, noted,
			unfired, unfiredSafe, legend, unsafe, plain("lost_request/post#1"), {Scenario: "duplicate_delivery/sequential", Safe: true, Trace: &runtime.Trace{}},
		},
	}
	full := Text(rep)
	got := Text(rep, FoldPlainOK())
	for _, listed := range []string{"baseline", "crash_restart/post#1", "crash_restart/post#2", "lost_request/post#3", "lost_request/post#4", "interleaving/s0s1f0f1", "crash_restart/post#3"} {
		if !strings.Contains(got, " "+listed+" ") {
			t.Errorf("folded summary does not list %s:\n%s", listed, got)
		}
	}
	for _, folded := range []string{"lost_acknowledgement/post#1", "lost_acknowledgement/post#2", "lost_request/post#1", "duplicate_delivery/sequential"} {
		if strings.Contains(got, folded) {
			t.Errorf("folded summary lists %s:\n%s", folded, got)
		}
		if !strings.Contains(full, folded) {
			t.Errorf("full summary does not list %s:\n%s", folded, full)
		}
	}
	want := "\n  ok           4 more with nothing to note: lost_acknowledgement (2), lost_request (1), duplicate_delivery (1); the agent returned an error in 1"
	if !strings.Contains(got, want) {
		t.Errorf("folded summary lacks %q:\n%s", want, got)
	}
	if strings.Contains(full, "nothing to note") {
		t.Errorf("full summary folds:\n%s", full)
	}
	// Nothing to list but the baseline: the count stands alone after it.
	safe := &runtime.Report{Name: "T", Safe: true, BaselineSucceeded: true, Baseline: rep.Baseline, Results: []*runtime.Result{plain("lost_request/post#1")}}
	if got := Text(safe, FoldPlainOK()); !strings.HasSuffix(got, "\n  ok           1 more with nothing to note: lost_request (1)") {
		t.Errorf("folded safe summary:\n%s", got)
	}
}

// TestOneAgentRunIsSingular: a suite of one agent run (a baseline alone)
// said "1 agent runs" (red team rtL); the count takes its noun's number as
// the scenario counts do.
func TestOneAgentRunIsSingular(t *testing.T) {
	for n, want := range map[int]string{0: ", 0 agent runs, ", 1: ", 1 agent run, ", 2: ", 2 agent runs, "} {
		rep := &runtime.Report{SchemaVersion: runtime.SchemaVersion, Name: "TestOne", Safe: true, BaselineSucceeded: true, AgentRuns: n,
			Baseline: &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true, Trace: &runtime.Trace{Ops: []runtime.Operation{}, Invocations: 1}}}
		if head, _, _ := strings.Cut(Text(rep), "\n"); !strings.Contains(head, want) {
			t.Errorf("%d runs: headline %q lacks %q", n, head, want)
		}
	}
}
