package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An errgroup fan-out of three refunds whose summary is dispatched inside
// the group, beside them, though it declares after=refund: every schedule
// has the same dependent_calls_concurrent, and each ran and printed a
// failing subtest, 5,042 of them in 44 to 57 s for one suite (red team rS
// #4). The exploration now stops once 100 schedules in a row made no
// finding that an earlier one had not, and says so; the fixed agent, whose
// summary waits for the group, explores every order of its refunds.
func TestAnExplorationThatOnlyRepeatsItsFindingsStops(t *testing.T) {
	refund := &Op{Name: "refund", Kind: KindWrite, Params: []string{"order"}}
	summary := &Op{Name: "send_summary", Kind: KindWrite, Params: []string{"batch"}, After: []string{"refund"}}
	for _, inside := range []bool{true, false} {
		agent := func(ctx context.Context) error {
			var wg sync.WaitGroup
			for i := range 3 {
				order := fmt.Sprintf("o-%d", i)
				wg.Go(func() {
					_ = traced(ctx, refund, []any{order}, []any{order}, func(context.Context) error { return nil })
				})
			}
			send := func() {
				_ = traced(ctx, summary, []any{"b-1"}, []any{"b-1"}, func(context.Context) error { return nil })
			}
			if inside {
				wg.Go(send)
			}
			wg.Wait()
			if !inside {
				send()
			}
			return nil
		}
		s := NewSuite(t.Name(), agent)
		_, err := s.Baseline(context.Background())
		require.NoError(t, err)
		require.True(t, s.Parallel(context.Background()))
		failed := 0
		ex, err := s.Interleavings(context.Background(), func(res *Result) {
			if !res.Safe {
				failed++
			}
		})
		require.NoError(t, err)
		if !inside {
			assert.Zero(t, failed)
			assert.True(t, ex.Exhaustive, "%+v", ex)
			assert.Empty(t, ex.Hazard)
			continue
		}
		assert.Equal(t, 1+repeatStop, ex.Explored, "%+v", ex)
		assert.Greater(t, failed, repeatStop/2, "schedules that failed") // not those that ran the summary last
		assert.False(t, ex.Exhaustive)
		assert.Contains(t, ex.Hazard, "schedules made no finding that earlier ones had not made")
		assert.True(t, strings.HasPrefix(ex.String(), fmt.Sprintf("Scheduling stopped after %d schedules: ", 1+repeatStop)), ex.String())
	}
}
