package runtime

import (
	"context"
	"errors"
	"testing"
)

// charge declines the first card and records the declined attempt (an
// audit row, as payment services keep); the agent retries with another
// card, which books the one charge. The declined call changed the state,
// but it did not do what the retry did: it is not an execution of the
// charge.
func TestDeclinedChargeThatRecordedAnAttemptIsNotADuplicate(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order", "card"}}
	w := &kvWorld{}
	agent := func(ctx context.Context) error {
		call := func(card string) error {
			return traced(ctx, charge, []any{"o1", card}, []any{"o1"}, func(context.Context) error {
				var declined bool
				w.do(func(m map[string]any) {
					if card == "expired" {
						l, _ := m["attempts"].([]any)
						m["attempts"] = append(l, "o1:declined")
						declined = true
						return
					}
					l, _ := m["charges"].([]any)
					m["charges"] = append(l, "o1:30")
				})
				if declined {
					return errors.New("card declined: expired")
				}
				return nil
			})
		}
		if err := call("expired"); err != nil {
			return call("visa")
		}
		return nil
	}
	rep := runOn(t, w, nil, agent)
	if got := findings(rep, ScenarioBaseline); len(got) != 0 {
		t.Fatalf("baseline findings %v: %s", got, rep.Baseline.Findings[0].Message)
	}
}

// The agent's first charge fails validation and changes nothing; a
// notifier started in Setup (not traced) delivers a queued email while it
// runs. The retry books the one charge.
func TestFailedChargeWhileABackgroundWorkerWritesIsNotADuplicate(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order", "amount"}}
	w := &kvWorld{}
	agent := func(ctx context.Context) error {
		call := func(amount int) error {
			return traced(ctx, charge, []any{"o1", amount}, []any{"o1"}, func(context.Context) error {
				if amount <= 0 {
					// the worker's write lands while the call runs
					w.do(func(m map[string]any) { m["emails_sent"] = 1.0 })
					return errors.New("amount must be positive")
				}
				return w.do(func(m map[string]any) {
					l, _ := m["charges"].([]any)
					m["charges"] = append(l, "o1")
				})
			})
		}
		if err := call(0); err != nil {
			return call(30)
		}
		return nil
	}
	rep := runOn(t, w, nil, agent)
	if got := findings(rep, ScenarioBaseline); len(got) != 0 {
		t.Fatalf("baseline findings %v: %s", got, rep.Baseline.Findings[0].Message)
	}
}
