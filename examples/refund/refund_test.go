package refund

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const paymentID = "payment-123"

// world builds a fresh bank per scenario and the invariant that guards it.
type world struct{ bank *Bank }

func (w *world) options() []testkit.Option {
	return []testkit.Option{
		testkit.Setup(func(context.Context) error {
			w.bank = NewBank(100, paymentID)
			return nil
		}),
		testkit.Invariant("at most one refund per payment", func(*runtime.Trace) error {
			if n := len(w.bank.Refunds()); n > 1 {
				return fmt.Errorf("payment %s refunded %d times", paymentID, n)
			}
			return nil
		}),
	}
}

func TestTraceOnce(t *testing.T) {
	bank := NewBank(100, paymentID)
	tr, err := runtime.RunTraced(context.Background(), "refund-agent", func(ctx context.Context) error {
		_, err := (&NaiveAgent{Bank: bank}).Run(ctx, paymentID)
		return err
	})
	require.NoError(t, err)
	require.Len(t, tr.Ops, 2)

	read, write := tr.Ops[0], tr.Ops[1]
	assert.Equal(t, "getPayment", read.Name)
	assert.Equal(t, runtime.KindRead, read.Kind)
	assert.Equal(t, []any{paymentID}, read.Args.Values)
	assert.Equal(t, Payment{ID: paymentID, Amount: 100, Status: "paid"}, read.Result)

	assert.Equal(t, "refund", write.Name)
	assert.Equal(t, runtime.KindWrite, write.Kind)
	assert.Equal(t, `"payment-123"`, write.Identity)
	assert.Equal(t, runtime.StatusSuccess, write.Status)
	assert.Equal(t, runtime.ObservationReceived, write.Observation)
	assert.Equal(t, Receipt{RefundID: "re_1", PaymentID: paymentID, Amount: 100}, write.Result)
	assert.Equal(t, "1:refund#1", write.ID)
	assert.Len(t, bank.Refunds(), 1)
}

func TestNaiveAgentIsCaught(t *testing.T) {
	w := &world{}
	rep := checked(t, testkit.Run(t, func(ctx context.Context) error {
		_, err := (&NaiveAgent{Bank: w.bank}).Run(ctx, paymentID)
		return err
	}, w.options()...))

	require.True(t, rep.BaselineSucceeded)
	assert.False(t, rep.Safe)
	unsafe := unsafeScenarios(rep)
	// The retry after a lost acknowledgement refunds again; so do two
	// deliveries at once. A crash stops the worker, and the redelivery
	// reads "refunded": safe. So is a failure before the refund.
	assert.Equal(t, []string{"lost_acknowledgement/refund#1", "duplicate_delivery/concurrent"}, unsafe)
	assertFinding(t, rep, "lost_acknowledgement/refund#1", runtime.CodeDuplicateWrite)
	assertFinding(t, rep, "lost_acknowledgement/refund#1", runtime.CodeInvariantFailed)
	assertFinding(t, rep, "duplicate_delivery/concurrent", runtime.CodeDuplicateWrite)
}

func TestRereadAgentFixesRetriesButNotConcurrentDelivery(t *testing.T) {
	w := &world{}
	rep := checked(t, testkit.Run(t, func(ctx context.Context) error {
		_, err := (&RereadAgent{Bank: w.bank}).Run(ctx, paymentID)
		return err
	}, w.options()...))
	assert.Equal(t, []string{"duplicate_delivery/concurrent"}, unsafeScenarios(rep))
	assertFinding(t, rep, "duplicate_delivery/concurrent", runtime.CodeDuplicateWrite)
}

func TestKeyedAgentIsSafe(t *testing.T) {
	w := &world{}
	rep := checked(t, testkit.TestAgent(t, func(ctx context.Context) error {
		_, err := (&KeyedAgent{Bank: w.bank}).Run(ctx, paymentID)
		return err
	}, append(w.options(), testkit.ExactlyOnce())...))
	assert.True(t, rep.Safe)
	assert.Equal(t, 6, rep.FaultCount) // 4 faults on one write, 2 duplicate deliveries
	assert.Zero(t, rep.InconclusiveCount)
	// The retry after the lost acknowledgement was answered from the key.
	for _, res := range rep.Results {
		if res.Scenario == "lost_acknowledgement/refundWithKey#1" {
			calls := res.Trace.Calls("refundWithKey")
			require.Len(t, calls, 2)
			assert.False(t, calls[0].Replayed)
			assert.True(t, calls[1].Replayed)
		}
	}
}

func TestGiveUpAgentIsSafeAndClaimsNothingItDidNotDo(t *testing.T) {
	w := &world{}
	rep := checked(t, testkit.TestAgent(t, func(ctx context.Context) error {
		_, err := (&GiveUpAgent{Bank: w.bank}).Run(ctx, paymentID)
		return err
	}, append(w.options(), testkit.ExactlyOnce())...))
	assert.True(t, rep.Safe)
	assert.False(t, rep.Has(runtime.CodeMissingWrite))
}

func TestSilentAgentDropsWorkAndSaysItDidNot(t *testing.T) {
	w := &world{}
	rep := checked(t, testkit.Run(t, func(ctx context.Context) error {
		_, err := (&SilentAgent{Bank: w.bank}).Run(ctx, paymentID)
		return err
	}, append(w.options(), testkit.ExactlyOnce())...))
	// Only where the refund never happened and the agent said "done": a
	// lost request and a failure before the operation. After a lost
	// acknowledgement the same timeout hides a refund that did happen: no
	// finding there.
	assert.Equal(t, []string{"lost_request/refundWithKey#1", "before_operation_failure/refundWithKey#1"}, unsafeScenarios(rep))
	assertFinding(t, rep, "lost_request/refundWithKey#1", runtime.CodeMissingWrite)
	assertFinding(t, rep, "before_operation_failure/refundWithKey#1", runtime.CodeMissingWrite)
}

func unsafeScenarios(rep *runtime.Report) []string {
	var out []string
	for _, res := range rep.Results {
		if !res.Safe {
			out = append(out, res.Scenario)
		}
	}
	return out
}

func assertFinding(t *testing.T, rep *runtime.Report, scenario, code string) {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Scenario == scenario && f.Code == code {
			assert.Contains(t, f.Replay, "go test -run '^"+t.Name()+"$/")
			return
		}
	}
	t.Errorf("no %s finding in scenario %s; findings: %+v", code, scenario, rep.Findings)
}

// checked validates a report against the JSON Schema before the test looks
// at it: every report an example produces must match runtime/report.schema.json.
func checked(t *testing.T, rep *runtime.Report) *runtime.Report {
	t.Helper()
	require.NoError(t, reportschema.Validate(rep))
	return rep
}
