package render_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/agentidem/agentidem-go/runtime"
)

// A report as runtime.Run or testkit returns it, or runtime.ReadReport
// reads it back: here a refund that a lost acknowledgement made happen twice.
func exampleReport() *runtime.Report {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	call := func(id string, seq int, fault runtime.FaultKind, obs runtime.Observation) runtime.Operation {
		return runtime.Operation{
			ID: id, Name: "refund", Kind: runtime.KindWrite,
			Args:     runtime.Args{Names: []string{"id"}, Values: []any{"p1"}},
			Identity: `"p1"`, Status: runtime.StatusSuccess, Observation: obs, Fault: fault,
			Invocation: 1, Occurrence: seq + 1, Seq: seq, StartedAt: t0, CompletedAt: t0,
		}
	}
	replay := "go test -run '^TestRefund$/^lost_acknowledgement$/^refund#1$' ./agent"
	dup := runtime.Finding{
		Code: runtime.CodeDuplicateWrite, Severity: runtime.SeverityError, Scenario: "lost_acknowledgement/refund#1",
		Message: `refund executed 2 times for identity "p1"`, Ops: []string{"refund"}, Identities: []string{`"p1"`},
		Calls: []string{"1:refund#1", "1:refund#2"}, Replay: replay,
	}
	lost := &runtime.Result{
		Scenario: "lost_acknowledgement/refund#1", Kind: "lost_acknowledgement", OperationIndex: 0,
		Fault: &runtime.Fault{Kind: runtime.FaultLostAck, Op: "refund", Occurrence: 1}, FaultFired: true,
		Trace: &runtime.Trace{Ops: []runtime.Operation{
			call("1:refund#1", 0, runtime.FaultLostAck, runtime.ObservationLost),
			call("1:refund#2", 1, runtime.FaultNone, runtime.ObservationReceived),
		}, Invocations: 1},
		Findings: []runtime.Finding{dup}, Replay: replay,
	}
	base := &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true,
		Trace: &runtime.Trace{Ops: []runtime.Operation{call("1:refund#1", 0, runtime.FaultNone, runtime.ObservationReceived)}, Invocations: 1}}
	return &runtime.Report{
		SchemaVersion: runtime.SchemaVersion, Name: "TestRefund", FaultCount: 1, UnsafeCount: 1,
		BaselineSucceeded: true, Baseline: base, Results: []*runtime.Result{lost},
		Findings: []runtime.Finding{dup}, AgentRuns: 2, Duration: 1500 * time.Microsecond,
	}
}

func ExampleText() {
	fmt.Println(render.Text(exampleReport()))
	// Output:
	// agentidem TestRefund: UNSAFE — baseline ok, 1 fault scenario (the fault fired), 1 of 1 unsafe, 0 inconclusive, 2 agent runs, 1.5ms
	// scenarios:
	//   ok           baseline                       1 call
	//   UNSAFE       lost_acknowledgement/refund#1  fault refund#1 lost_acknowledgement (fired), 2 calls, 1 error finding
	// findings:
	//   error   duplicate_write        lost_acknowledgement/refund#1
	//           refund executed 2 times for identity "p1"
	//           op: refund  identity: "p1"  calls: 1:refund#1, 1:refund#2
	//           replay: go test -run '^TestRefund$/^lost_acknowledgement$/^refund#1$' ./agent
}

func ExampleHTML() {
	var page strings.Builder
	if err := render.HTML(&page, exampleReport()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	// One self-contained file: open it in any browser, attach it to CI.
	fmt.Println(strings.HasPrefix(page.String(), "<!DOCTYPE html>"), strings.Contains(page.String(), `data-verdict="UNSAFE"`))
	// Output: true true
}

func ExampleDecide() {
	// Color and live progress only on a terminal, and color only without
	// NO_COLOR; pipes and CI logs get plain text.
	env := func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return "xterm"
	}
	fmt.Printf("%+v\n", render.Decide(true, env))
	fmt.Printf("%+v\n", render.Decide(false, env))
	// Output:
	// {Live:true Color:false}
	// {Live:false Color:false}
}
