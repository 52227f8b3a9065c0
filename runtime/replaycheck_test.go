package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExploredCountsDistinctSchedules: the reverse of the listed order is
// also one of the orders enumerated after it; it runs once and counts once
// (issue 12.12: "explored 2521 schedules of 2520").
func TestExploredCountsDistinctSchedules(t *testing.T) {
	var w *pairWorld
	s := NewSuite("pair", func(ctx context.Context) error { return w.agent(ctx) },
		Setup(func(context.Context) error { w = &pairWorld{}; return nil }))
	endSuite(t, s)
	ctx := context.Background()
	_, err := s.Baseline(ctx)
	require.NoError(t, err)
	require.True(t, s.Parallel(ctx))
	var ran []string
	ex, err := s.Interleavings(ctx, func(res *Result) { ran = append(ran, res.Schedule) })
	require.NoError(t, err)
	assert.True(t, ex.Exhaustive)
	assert.Equal(t, 6, ex.Space)
	assert.Len(t, ran, 6)
	assert.Equal(t, ex.Space, ex.Explored, "explored %d schedules of %d", ex.Explored, ex.Space)
}

// TestReplayScheduleMustFit: a schedule of more rounds than the agent makes
// is refused, naming both shapes, instead of running as "1 schedule of 0"
// (issue 12.12).
func TestReplayScheduleMustFit(t *testing.T) {
	var w *pairWorld
	_, err := Run(context.Background(), "pair", func(ctx context.Context) error { return w.agent(ctx) },
		Setup(func(context.Context) error { w = &pairWorld{}; return nil }),
		Replay("s0s1f0f1.s0s1f0f1.s1s0f1f0.s0s1f1f0"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "schedule s0s1f0f1.s0s1f0f1.s1s0f1f0.s0s1f1f0 does not fit this agent: it has 4 rounds of 2, 2, 2 and 2 calls, the agent made 1 round of 2 calls; the agent changed since the schedule was printed: run without AGENTIDEM_SCHEDULE")
}
