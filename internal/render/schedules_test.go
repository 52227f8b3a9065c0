package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// schedulesOnly is the report of a suite that ran schedules and no fault.
func schedulesOnly() *runtime.Report {
	legend := "s0 = create_entities#1, s1 = add_observations#1"
	res := func(sched string, findings ...runtime.Finding) *runtime.Result {
		return &runtime.Result{Scenario: "interleaving/" + sched, Kind: runtime.ScenarioInterleaving, OperationIndex: -1,
			Schedule: sched, Legend: legend, Trace: &runtime.Trace{}, Findings: findings, Safe: len(findings) == 0,
			Replay: "AGENTIDEM_SCHEDULE='" + sched + "'"}
	}
	f := runtime.Finding{Code: runtime.CodeInvariantFailed, Severity: runtime.SeverityError, Scenario: "interleaving/s1s0f1f0",
		Message: "invariant \"observed\" failed: Alice has no observation", Replay: "AGENTIDEM_SCHEDULE='s1s0f1f0'"}
	rep := &runtime.Report{SchemaVersion: runtime.SchemaVersion, Name: "TestMemory", BaselineSucceeded: true, UnsafeCount: 1,
		Baseline: &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true, Trace: &runtime.Trace{}},
		Results:  []*runtime.Result{res("s0s1f0f1"), res("s1s0f1f0", f)}, Findings: []runtime.Finding{f}}
	return rep
}

func TestSchedulesOnlyReadPlainly(t *testing.T) {
	rep := schedulesOnly()
	text := Text(rep)
	head := strings.SplitN(text, "\n", 2)[0]
	if !strings.Contains(head, "baseline ok, 2 schedules, 1 of 2 unsafe") || strings.Contains(head, "fault") {
		t.Errorf("headline %q", head)
	}
	for _, want := range []string{
		"interleaving/s0s1f0f1  s0 = create_entities#1, s1 = add_observations#1, 0 calls",
		"\n          schedule s1s0f1f0: s0 = create_entities#1, s1 = add_observations#1 (s = start, f = finish)\n          replay: AGENTIDEM_SCHEDULE='s1s0f1f0'",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}

	var page bytes.Buffer
	if err := HTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page.String(), `<p class="schedlegend">schedule s1s0f1f0: s0 = create_entities#1, s1 = add_observations#1 (s = start, f = finish)</p>`); n != 2 {
		t.Errorf("the HTML page shows the legend of the unsafe schedule %d times, want 2 (under the problem and under its timeline)", n)
	}
	var junit bytes.Buffer
	if err := JUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), "schedule s0s1f0f1: s0 = create_entities#1, s1 = add_observations#1") {
		t.Errorf("JUnit has no legend:\n%s", junit.String())
	}
}

func TestScenarioCounts(t *testing.T) {
	rep := schedulesOnly()
	rep.Results = append(rep.Results,
		&runtime.Result{Kind: runtime.ScenarioLostAck, Fault: &runtime.Fault{Kind: runtime.FaultLostAck, Op: "a", Occurrence: 1}, FaultFired: true},
		&runtime.Result{Kind: runtime.ScenarioBeforeFailure, Fault: &runtime.Fault{Kind: runtime.FaultBefore, Op: "a", Occurrence: 1}},
		&runtime.Result{Kind: runtime.ScenarioDuplicateSeq})
	if got, want := scenarioCounts(rep), "2 fault scenarios (1 of 2 planned faults fired), 1 duplicate delivery, 2 schedules"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	rep.Results = nil
	if got := scenarioCounts(rep); got != "no other scenario" {
		t.Errorf("got %q", got)
	}
}
