package render

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/runtime"
)

const paymentID = "payment-123"

// naiveReport runs the real fault suite on the refund example's NaiveAgent,
// which retries a refund blindly: a lost acknowledgement and a concurrent
// redelivery each refund twice.
func naiveReport(t testing.TB) *runtime.Report {
	t.Helper()
	return refundReport(t, "TestNaiveAgent", func(ctx context.Context, b *refund.Bank) error {
		_, err := (&refund.NaiveAgent{Bank: b}).Run(ctx, paymentID)
		return err
	})
}

// keyedReport is the same suite on the fixed agent: safe everywhere.
func keyedReport(t testing.TB) *runtime.Report {
	t.Helper()
	return refundReport(t, "TestKeyedAgent", func(ctx context.Context, b *refund.Bank) error {
		_, err := (&refund.KeyedAgent{Bank: b}).Run(ctx, paymentID)
		return err
	})
}

func refundReport(t testing.TB, name string, agent func(context.Context, *refund.Bank) error) *runtime.Report {
	t.Helper()
	var bank *refund.Bank
	rep, err := runtime.Run(context.Background(), name, func(ctx context.Context) error {
		return agent(ctx, bank)
	},
		runtime.Setup(func(context.Context) error { bank = refund.NewBank(100, paymentID); return nil }),
		runtime.Invariant("at most one refund per payment", func(*runtime.Trace) error {
			if n := len(bank.Refunds()); n > 1 {
				return fmt.Errorf("payment %s refunded %d times", paymentID, n)
			}
			return nil
		}),
		runtime.ReplayCommand(func(s string) string {
			return "go test -run '^" + name + "$/^" + strings.ReplaceAll(s, "/", "$/^") + "$' ./examples/refund"
		}),
	)
	if err != nil {
		t.Fatalf("running the suite: %v", err)
	}
	return rep
}

// roundTrip writes the report as JSON and reads it back, as agentidem-gen
// report does with a saved file.
func roundTrip(t testing.TB, rep *runtime.Report) *runtime.Report {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, buf.Bytes())
	back, err := runtime.ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// Payloads that break out of HTML text, attributes, scripts and XML.
const (
	xssScript = `<script>alert(1)</script>`
	xssAttr   = `"><img src=x onerror=alert(1)>`
	xssQuote  = `' onmouseover='alert(2)' x='`
	xssStyle  = `</style><style>body{display:none}</style>`
	xssCDATA  = `]]><evil/>&amp;`
	ctrl      = "bell\x07 esc\x1b[31mred"
)

var payloads = []string{xssScript, xssAttr, xssQuote, xssStyle, xssCDATA}

// hostileReport is a report whose every string from a trace is an
// injection attempt: op names, args (names and values), results, errors,
// identities, findings, replay lines, invariants, panics.
func hostileReport() *runtime.Report {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	op := func(seq, inv int, name string, kind runtime.Kind) runtime.Operation {
		return runtime.Operation{
			ID:   fmt.Sprintf("%d:%s#%d", inv, name, seq),
			Name: name, Kind: kind,
			Args: runtime.Args{
				Names:  []string{xssAttr, "note"},
				Values: []any{xssScript, map[string]any{"q": xssQuote, "s": xssStyle}},
			},
			Identity: `"` + xssAttr + `"`, Entity: xssCDATA,
			Result: map[string]any{"html": xssScript, "ctrl": ctrl},
			Status: runtime.StatusSuccess, Observation: runtime.ObservationReceived,
			Invocation: inv, Occurrence: 1, Seq: seq, Site: xssQuote,
			StartedAt: t0, CompletedAt: t0,
		}
	}
	base := &runtime.Result{
		Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true,
		Trace:  &runtime.Trace{Ops: []runtime.Operation{op(0, 1, xssScript, runtime.KindRead)}, Invocations: 1},
		Replay: "go test -run " + xssAttr,
	}
	bad := op(1, 1, xssScript, runtime.KindWrite)
	bad.Error = xssAttr + xssScript + ctrl
	bad.Status = runtime.StatusFailed
	bad.Observation = runtime.ObservationLost
	bad.Fault = runtime.FaultLostAck
	bad.Panic = &runtime.Panic{Value: xssScript, Stack: xssStyle}
	finding := runtime.Finding{
		Code: runtime.CodeDuplicateWrite, Severity: runtime.SeverityError,
		Message: "dup " + xssScript + " " + xssAttr + " " + ctrl, Scenario: "lost_acknowledgement/" + xssAttr,
		Ops: []string{xssScript}, Identities: []string{xssAttr}, Calls: []string{bad.ID},
		Replay: "go test -run '" + xssQuote + "'", Stack: xssCDATA,
	}
	res := &runtime.Result{
		Scenario: "lost_acknowledgement/" + xssAttr, Kind: "lost_acknowledgement", OperationIndex: 1,
		OperationName: xssScript, Phase: "after", Failed: true, Error: xssScript + ctrl,
		Fault: &runtime.Fault{Kind: runtime.FaultLostAck, Op: xssScript, Occurrence: 1}, FaultFired: true,
		Trace: &runtime.Trace{
			Ops:    []runtime.Operation{op(0, 1, "read"+xssQuote, runtime.KindRead), bad},
			Panics: []runtime.Panic{{Op: xssAttr, Value: xssScript, Stack: xssStyle}},
			Errors: []string{xssCDATA}, Invocations: 1,
			Notes: []string{"not run: " + xssScript},
		},
		Invariants: []runtime.InvariantResult{{Name: xssScript, Error: xssAttr}},
		Duplicates: []runtime.Duplicate{{Op: xssScript, Identity: xssAttr, Count: 2, Calls: []string{bad.ID, xssQuote}}},
		Findings:   []runtime.Finding{finding},
		Replay:     "go test -run '" + xssQuote + "'",
	}
	return &runtime.Report{
		SchemaVersion: runtime.SchemaVersion, Name: "Test" + xssScript + xssAttr,
		Safe: false, FaultCount: 1, UnsafeCount: 1, BaselineSucceeded: true,
		Baseline: base, Results: []*runtime.Result{res}, Findings: []runtime.Finding{finding},
		AgentRuns: 2, StartedAt: t0,
	}
}
