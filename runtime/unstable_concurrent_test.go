package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRedeliveredFreshKeyEitherDeliveryAtOnce: a saga reserves (the sink
// numbers reservations in order) and then cancels the reservation it got,
// keyed by its id. Delivered twice at once, the two deliveries race for
// the sink's first number, the baseline's; which one loses is the
// scheduler's choice, and either way one cancel goes out under an id the
// baseline never had, sending the same reason: identity_unstable. Here
// the first delivery to start waits, so that the other takes the
// baseline's id: only the second delivery was looked at, and this finding
// was missed whenever the first delivery lost the race (red team rtX #6:
// 3 of 12 runs of its saga).
func TestRedeliveredFreshKeyEitherDeliveryAtOnce(t *testing.T) {
	reserve := &Op{Name: "reserve", Kind: KindWrite, Params: []string{"booking"}}
	cancel := &Op{Name: "cancel_reservation", Kind: KindWrite, Params: []string{"reservation", "reason"}}
	var mu sync.Mutex
	var seq, entered int
	agent := func(ctx context.Context) error {
		mu.Lock()
		entered++
		first := entered == 1
		mu.Unlock()
		if first {
			time.Sleep(5 * time.Millisecond) // the other delivery takes the sink's first number
		}
		var id string
		if err := traced(ctx, reserve, []any{"bk-1"}, []any{"bk-1"}, func(context.Context) error {
			mu.Lock()
			seq++
			id = fmt.Sprintf("R-%d", seq)
			mu.Unlock()
			return nil
		}); err != nil {
			return err
		}
		return traced(ctx, cancel, []any{id, "flight sold out"}, []any{id}, func(context.Context) error { return nil })
	}
	for run := range 8 {
		rep, err := Run(context.Background(), t.Name(), agent, Setup(func(context.Context) error {
			mu.Lock()
			seq, entered = 0, 0
			mu.Unlock()
			return nil
		}))
		require.NoError(t, err)
		found := false
		for _, r := range rep.Results {
			if r.Scenario != ScenarioDuplicateConcurrent {
				continue
			}
			for _, f := range r.Findings {
				if f.Code == CodeIdentityUnstable && f.Ops[0] == "cancel_reservation" {
					found = true
					require.Contains(t, f.Message, "R-1")
					require.Contains(t, f.Message, "R-2")
				}
			}
			require.True(t, found, "run %d: no identity_unstable for cancel_reservation in %s: %v", run, r.Scenario, r.Findings)
		}
		require.True(t, found, "run %d: no concurrent delivery", run)
	}
}
