package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A booking whose gateway fails after the processor booked it (a 502 with
// the refund made) is retried by the agent with its key: the processor
// answers with the refund it has. The failed call changed the state in its
// own window, so an equal window of a later execution shows that it
// changed nothing: the repeats the scenarios make of the keyed call are
// absorbed. They were counted (State saw no execution change the world),
// since the failed call is left out of the executions when no later one
// redid what it did. The agent that books without a key is caught.
// (Not under duplicate_delivery/concurrent: see below.)
func TestRepeatAfterABookingThatFailedYetLandedIsJudgedByState(t *testing.T) {
	refund := &Op{Name: "refund", Kind: KindWrite, Params: []string{"order", "key"}}
	for _, keyed := range []bool{true, false} {
		t.Run(map[bool]string{true: "keyed", false: "naive"}[keyed], func(t *testing.T) {
			w := &kvWorld{}
			calls := 0
			book := func(ctx context.Context, key string) error {
				return traced(ctx, refund, []any{"ORD-9", key}, []any{"ORD-9"}, func(context.Context) error {
					var failed bool
					w.do(func(m map[string]any) {
						calls++
						refunds, _ := m["refunds"].([]any)
						if keyed {
							for _, r := range refunds {
								if r == key {
									return // the refund it has
								}
							}
						}
						m["refunds"] = append(refunds, key)
						failed = calls == 1 // the gateway fails after the first booking
					})
					if failed {
						return errors.New("502 bad gateway")
					}
					return nil
				})
			}
			agent := func(ctx context.Context) error {
				var err error
				for attempt := 0; attempt < 3; attempt++ {
					key := "refund-ORD-9"
					if !keyed {
						key = "attempt"
					}
					if err = book(ctx, key); err == nil {
						return nil
					}
				}
				return err
			}
			rep := runOn(t, w, func(map[string]any) { calls = 0 }, agent)
			require.True(t, rep.BaselineSucceeded, "%v", rep.Baseline.Findings)
			var dups []string
			for _, r := range rep.Results {
				if r.Kind == ScenarioDuplicateConcurrent {
					// The two deliveries' calls are in flight together:
					// which of them meets the 502, and whether the booking
					// that landed ran before the other's, is the
					// scheduler's, and so is this scenario's judgement.
					continue
				}
				for _, f := range r.Findings {
					if f.Code == CodeDuplicateWrite {
						dups = append(dups, r.Scenario+": "+f.Message)
					}
				}
			}
			if keyed {
				assert.Empty(t, dups)
			} else {
				assert.NotEmpty(t, dups, "the naive agent books again")
			}
		})
	}
}
