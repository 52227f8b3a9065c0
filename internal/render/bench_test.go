package render

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// bigReport is a report of the size a parallel agent produces: scenarios
// scenarios of calls calls each, in batches of four, every tenth scenario
// unsafe.
func bigReport(scenarios, calls int) *runtime.Report {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func() *runtime.Trace {
		tr := &runtime.Trace{Invocations: 1}
		for i := range calls {
			tr.Ops = append(tr.Ops, runtime.Operation{
				ID: fmt.Sprintf("1:addLineItem#%d", i+1), Name: "addLineItem", Kind: runtime.KindWrite,
				Args:     runtime.Args{Names: []string{"invoice", "sku", "qty"}, Values: []any{"INV-1", fmt.Sprintf("sku-%d", i), i}},
				Identity: fmt.Sprintf(`["INV-1","sku-%d"]`, i), Entity: `"INV-1"`,
				Result: map[string]any{"line": i, "total": 100 * i}, Status: runtime.StatusSuccess,
				Observation: runtime.ObservationReceived, Invocation: 1, Occurrence: i + 1, Seq: i,
				StartedAt: t0, CompletedAt: t0,
			})
		}
		return tr
	}
	rep := &runtime.Report{SchemaVersion: "1", Name: "TestBig", BaselineSucceeded: true,
		Baseline: &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true, Trace: mk()}}
	for s := range scenarios {
		res := &runtime.Result{Scenario: fmt.Sprintf("lost_acknowledgement/addLineItem#%d", s+1), Kind: "lost_acknowledgement",
			Fault: &runtime.Fault{Kind: runtime.FaultLostAck, Op: "addLineItem", Occurrence: 1}, FaultFired: true,
			Trace: mk(), Replay: "go test -run x", Safe: true}
		if s%10 == 0 {
			f := runtime.Finding{Code: runtime.CodeDuplicateWrite, Severity: runtime.SeverityError, Scenario: res.Scenario,
				Message: "addLineItem executed 2 times", Ops: []string{"addLineItem"}, Identities: []string{`["INV-1","sku-0"]`},
				Calls: []string{"1:addLineItem#1", "1:addLineItem#2"}, Replay: res.Replay}
			res.Findings, res.Safe = []runtime.Finding{f}, false
			rep.Findings = append(rep.Findings, f)
			rep.UnsafeCount++
		}
		rep.Results = append(rep.Results, res)
	}
	rep.FaultCount = len(rep.Results)
	return rep
}

func BenchmarkRender(b *testing.B) {
	for _, size := range []struct{ scenarios, calls int }{{6, 4}, {50, 20}, {200, 40}} {
		rep := bigReport(size.scenarios, size.calls)
		name := fmt.Sprintf("%dx%d", size.scenarios, size.calls)
		b.Run("HTML/"+name, func(b *testing.B) {
			for b.Loop() {
				if err := HTML(io.Discard, rep); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("JUnit/"+name, func(b *testing.B) {
			for b.Loop() {
				if err := JUnit(io.Discard, rep); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Text/"+name, func(b *testing.B) {
			for b.Loop() {
				_ = Text(rep)
			}
		})
	}
}
