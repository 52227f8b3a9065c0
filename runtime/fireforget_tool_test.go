package runtime

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tool places an order (keyed: the sink answers a repeat as a replay)
// and sends the customer a notification from a goroutine it does not wait
// for; the notification's service takes a moment. The agent, a queue
// consumer, retries the tool on an error. The correct one notifies only for
// an order placed anew; the buggy one notifies on a replay too, so a retry
// after a lost acknowledgement notifies twice. The notification began
// while the tool ran and was still in its service when the agent
// returned: a scenario run one delivery at a time ended there, its call
// "running", and went inconclusive with a goroutine_leak (a red team's
// buggy agent passed go test 6 runs of 10 so). Now such a run waits for
// the calls begun in it, as the gated ones do, where the baseline showed
// calls from goroutines the invocations started.
func TestNotificationSentFromAToolsGoroutineIsTheScenarios(t *testing.T) {
	place := &Op{Name: "place_order", Kind: KindWrite, Params: []string{"customer"}}
	notify := &Op{Name: "notify", Kind: KindWrite, Params: []string{"order"}}
	for _, buggy := range []bool{false, true} {
		t.Run(map[bool]string{false: "notifies new orders", true: "notifies replays too"}[buggy], func(t *testing.T) {
			var mu sync.Mutex
			var orders, notes []string
			placeAndNotify := func(ctx context.Context) error {
				return traced(ctx, place, []any{"ada"}, []any{"ada"}, func(ctx context.Context) error {
					mu.Lock()
					replayed := slices.Contains(orders, "ada")
					if !replayed {
						orders = append(orders, "ada")
					}
					mu.Unlock()
					if replayed && !buggy {
						return nil
					}
					go func() {
						_ = traced(context.WithoutCancel(ctx), notify, []any{"ord-ada"}, []any{"ord-ada"}, func(context.Context) error {
							time.Sleep(3 * time.Millisecond) // the notification service
							mu.Lock()
							notes = append(notes, "ord-ada placed")
							mu.Unlock()
							return nil
						})
					}()
					return nil
				})
			}
			agent := func(ctx context.Context) error {
				var err error
				for range 3 {
					if err = placeAndNotify(ctx); err == nil {
						return nil
					}
				}
				return err
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error {
					mu.Lock()
					orders, notes = nil, nil
					mu.Unlock()
					return nil
				}),
				State(func() any {
					mu.Lock()
					defer mu.Unlock()
					return map[string]any{"orders": slices.Clone(orders), "notes": slices.Clone(notes)}
				}))
			require.NoError(t, err)
			var inconclusive, dups []string
			for _, r := range rep.Results {
				if r.Inconclusive {
					inconclusive = append(inconclusive, r.Scenario)
					for _, f := range r.Findings {
						t.Logf("%s: %s %s", r.Scenario, f.Code, f.Message)
					}
					t.Logf("%s notes %q", r.Scenario, r.Trace.Notes)
				}
				for _, f := range r.Findings {
					if f.Code == CodeDuplicateWrite {
						dups = append(dups, r.Scenario)
					}
				}
			}
			assert.Empty(t, inconclusive, "scenarios that ended with the notification running")
			if buggy {
				assert.Contains(t, dups, ScenarioLostAck+"/place_order#1", "the replay's second notification")
				return
			}
			assert.Empty(t, dups)
			assert.True(t, rep.Safe)
		})
	}
}
