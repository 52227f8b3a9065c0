package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// landedCharge is a charge whose gateway moves the money and then answers
// an error where fail says, from whether the order was booked before the
// call (a confirmation that timed out: red team rtL R0,
// adapters/mcp/rtl/failedeffect TestAlwaysErrState); keyed, the gateway
// books an order once whatever the calls.
func landedCharge(w *kvWorld, keyed bool, fail func(booked bool) bool) func(ctx context.Context) error {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	return func(ctx context.Context) error {
		return traced(ctx, charge, []any{"o1"}, []any{"o1"}, func(context.Context) error {
			booked := false
			w.do(func(m map[string]any) {
				l, _ := m["charges"].([]any)
				booked = slices.Contains(l, any("o1"))
				if !keyed || !booked {
					m["charges"] = append(l, "o1")
				}
			})
			if fail(booked) {
				return errors.New("gateway timeout confirming charge o1")
			}
			return nil
		})
	}
}

func dupScenarios(rep *Report) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.Code == CodeDuplicateWrite {
			out = append(out, f.Scenario)
		}
	}
	slices.Sort(out)
	return out
}

// Each call of the charge lands and answers an error; the agent takes the
// error for done and returns. A redelivery charges again: two landed
// executions, neither successful, are one effect done twice. Before, the
// last landed call of a group was always left out (a later execution had
// to redo it) and the suite said nothing (red team rtL R0, 10/10 runs).
func TestTwoLandedChargesOfOneOrderAreADuplicate(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		w := &kvWorld{}
		call := landedCharge(w, keyed, func(bool) bool { return true })
		rep := runOn(t, w, nil, func(ctx context.Context) error { _ = call(ctx); return nil })
		want := []string{ScenarioDuplicateConcurrent, ScenarioDuplicateSeq}
		if keyed {
			want = nil // the gateway books an order once: nothing twice
		}
		if got := dupScenarios(rep); !slices.Equal(got, want) {
			t.Errorf("keyed=%v: duplicate_write in %v, want %v; findings %v", keyed, got, want, findings(rep, ""))
		}
		if failedOverlapped(rep) {
			// The judgement by the end (landedTogether) was taken: -v
			// counts the runs that took it (4 and 7 in two sets of 30
			// under -race; the 7 all failed before it).
			t.Logf("keyed=%v: the concurrent delivery's failed charges overlapped", keyed)
		}
		for _, f := range rep.Findings {
			if f.Code == CodeDuplicateWrite && !strings.Contains(f.Message, "did it again, failing too") {
				t.Errorf("keyed=%v: %s: the message does not say the repeat failed and landed too: %s", keyed, f.Scenario, f.Message)
			}
		}
	}
}

// The first charge succeeds; any later one lands and answers an error
// (the gateway's confirmation of a second charge times out). A lost
// acknowledgement retried, a crash restarted and a redelivery each charge
// twice; the one landed call came last and was left out.
func TestLandedRepeatOfASuccessfulChargeIsADuplicate(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		w := &kvWorld{}
		call := landedCharge(w, keyed, func(booked bool) bool { return booked })
		agent := func(ctx context.Context) error {
			if err := call(ctx); err != nil && ctx.Err() == nil {
				return call(ctx) // retried once, as agents do
			}
			return nil
		}
		rep := runOn(t, w, nil, agent)
		want := []string{ScenarioCrashRestart + "/charge#1", ScenarioDuplicateConcurrent, ScenarioDuplicateSeq, ScenarioLostAck + "/charge#1"}
		if keyed {
			want = nil
		}
		if got := dupScenarios(rep); !slices.Equal(got, want) {
			t.Errorf("keyed=%v: duplicate_write in %v, want %v; findings %v", keyed, got, want, findings(rep, ""))
		}
	}
}

// payment asks for approval before it pays (an Eino interrupt: the call
// fails, and the agent calls again once approved). The buggy one pays
// before it asks, in the call that fails, so each delivery pays once, in
// a failed call (red team rtL R0, adapters/eino/rtl/interrupt
// TestPayThenApprove, 10/10 runs INCONCLUSIVE with two payments in the
// world). Its twin that pays after the approval (TestApproveThenPay) was
// UNSAFE: the agent that paid first got the better verdict.
func TestPaymentMadeBeforeAnApprovalInterruptIsADuplicateWhenRedelivered(t *testing.T) {
	pay := &Op{Name: "pay", Kind: KindWrite, Params: []string{"invoice", "approved"}}
	for _, tc := range []struct {
		name            string
		payFirst, keyed bool
		want            []string
	}{
		{"pay then approve", true, false, []string{ScenarioCrashRestart + "/pay#2", ScenarioDuplicateConcurrent, ScenarioDuplicateSeq}},
		{"approve then pay", false, false, []string{ScenarioCrashRestart + "/pay#2", ScenarioDuplicateConcurrent, ScenarioDuplicateSeq}},
		{"pay then approve, keyed", true, true, nil},
		{"approve then pay, keyed", false, true, nil},
	} {
		w := &kvWorld{}
		agent := func(ctx context.Context) error {
			call := func(approved bool) error {
				return traced(ctx, pay, []any{"INV-7", approved}, []any{"INV-7"}, func(context.Context) error {
					if approved != tc.payFirst { // before the approval, or after it
						w.do(func(m map[string]any) {
							l, _ := m["payments"].([]any)
							if !tc.keyed || !slices.Contains(l, any("INV-7:40")) {
								m["payments"] = append(l, "INV-7:40")
							}
						})
					}
					if !approved {
						return errors.New("interrupted: approve payment of INV-7")
					}
					return nil
				})
			}
			if err := call(false); err != nil && ctx.Err() == nil {
				return call(true) // the human approved: resume
			}
			return nil
		}
		rep := runOn(t, w, nil, agent)
		if got := dupScenarios(rep); !slices.Equal(got, tc.want) {
			t.Errorf("%s: duplicate_write in %v, want %v; findings %v", tc.name, got, tc.want, findings(rep, ""))
		}
	}
}

// failedOverlapped reports whether failed calls of the concurrent delivery
// overlapped: they have no window of their own, and only the end says
// whether they landed (landedTogether). Before, that scenario missed them
// (the lockstep lets them overlap now and then: CI167, CI171).
func failedOverlapped(rep *Report) bool {
	for _, r := range rep.Results {
		if r.Scenario == ScenarioDuplicateConcurrent && r.Trace != nil &&
			slices.ContainsFunc(r.Trace.Ops, func(o Operation) bool { return o.Overlapped && o.Status == StatusFailed }) {
			return true
		}
	}
	return false
}
