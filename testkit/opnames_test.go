package testkit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/pay/paypal"
	"github.com/agentidem/agentidem-go/testkit/internal/pay/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolsOfOneNameInTwoPackagesAreTwoOps: two payment packages each wrap
// a (*Gateway).Refund, whose default op name is Gateway.Refund in both. An
// agent that refunds a split payment once through each made one effect
// each; the suite took them for one op called twice, a duplicate_write of
// the baseline (red team), and aimed the fault of Gateway.Refund#2 at
// paypal's. Each op is now named after its package, and a real duplicate
// (a retry through stripe after a lost acknowledgement) is still found, on
// stripe's op alone.
func TestToolsOfOneNameInTwoPackagesAreTwoOps(t *testing.T) {
	var s *stripe.Gateway
	var p *paypal.Gateway
	setup := testkit.Setup(func(context.Context) error {
		s, p = stripe.New(), paypal.New()
		return nil
	})
	// One refund through each gateway of a payment split between them.
	split := func(ctx context.Context) error {
		if err := s.RefundTraced(ctx, "pay-1"); err != nil {
			return err
		}
		return p.RefundTraced(ctx, "pay-1")
	}
	rep := testkit.Run(t, split, setup)
	require.NotNil(t, rep.Baseline)
	var names []string
	for _, op := range rep.Baseline.Trace.Ops {
		names = append(names, op.Name)
	}
	assert.Equal(t, []string{"stripe.Gateway.Refund", "paypal.Gateway.Refund"}, names)
	// The gateways count refunds, so a crash or a second delivery does
	// refund twice (found below, on the op it repeats); the baseline,
	// one refund through each, is no duplicate.
	assert.True(t, rep.Baseline.Safe, "a refund through each gateway was taken for a duplicate: %v", rep.Problems)
	for _, f := range rep.Problems {
		for _, o := range f.SeenIn {
			assert.NotEqual(t, "baseline", o.Scenario, "%s", f.Message)
		}
	}
	// Each op's first call is a fault target of its own, and each fault
	// fires: none is aimed at a second call of one op that is not there.
	aimed := map[string]int{}
	for _, res := range rep.Results {
		if f := res.Trace.Fault; f != nil {
			aimed[f.Op+"#"+fmt.Sprint(f.Occurrence)]++
			assert.True(t, res.Trace.Fired, "%s: the fault did not fire", res.Trace.ID)
		}
	}
	assert.Equal(t, map[string]int{"stripe.Gateway.Refund#1": 4, "paypal.Gateway.Refund#1": 4}, aimed)

	retried := func(ctx context.Context) error {
		if err := s.RefundTraced(ctx, "pay-1"); err != nil {
			if err := s.RefundTraced(ctx, "pay-1"); err != nil {
				return err
			}
		}
		return p.RefundTraced(ctx, "pay-1")
	}
	rep = testkit.Run(t, retried, setup)
	var lost *runtime.Result
	for _, res := range rep.Results {
		if res.Trace.ID == "lost_acknowledgement/stripe.Gateway.Refund#1" {
			lost = res
		}
	}
	require.NotNil(t, lost, "no lost acknowledgement of stripe's refund was planned")
	var dup []string
	for _, f := range lost.Findings {
		if f.Code == runtime.CodeDuplicateWrite {
			dup = append(dup, f.Ops...)
		}
	}
	assert.Equal(t, []string{"stripe.Gateway.Refund"}, dup, "the retry through stripe, once its acknowledgement was lost")
}
