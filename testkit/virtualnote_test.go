package testkit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// VirtualTime runs only the interleavings of parallel calls in a bubble.
// Asked for by an agent that makes its calls one at a time, it did
// nothing, every result said "clock": "real", and nothing said why: a
// retry's back-off of 12 s cost its wall time and stalled, under an option
// the README describes as making waits cost no wall time (red team rtW
// #10). The report says so now; an agent whose schedules ran in the bubble
// gets no such note.
func TestVirtualTimeWithNoParallelCallsSaysSo(t *testing.T) {
	const note = "virtual time was asked for, but no scenario ran on it"
	hasNote := func(rep *runtime.Report) bool {
		for _, n := range rep.Notes {
			if strings.Contains(n, note) {
				return true
			}
		}
		return false
	}
	var l *tools.Ledger
	sequential := func(ctx context.Context) error {
		if _, err := l.CountTraced(ctx); err != nil {
			return err
		}
		return l.PostTraced(ctx, "entry-1", "x")
	}
	setup := testkit.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil })

	rep := testkit.Run(t, sequential, setup, testkit.NoSummary(), testkit.VirtualTime())
	require.True(t, rep.BaselineSucceeded)
	for _, res := range rep.Results {
		assert.Equal(t, runtime.ClockReal, res.Clock, res.Scenario)
	}
	assert.True(t, hasNote(rep), "no note says VirtualTime ran nothing on virtual time: %q", rep.Notes)

	rep = testkit.Run(t, sequential, setup, testkit.NoSummary())
	assert.False(t, hasNote(rep), "a note of virtual time without VirtualTime: %q", rep.Notes)

	parallel := func(ctx context.Context) error {
		g, gctx := errgroup.WithContext(ctx)
		for _, key := range []string{"entry-1", "entry-2"} {
			g.Go(func() error { return l.PostTraced(gctx, key, "x") })
		}
		return g.Wait()
	}
	rep = testkit.Run(t, parallel, setup, testkit.NoSummary(), testkit.VirtualTime())
	require.True(t, rep.BaselineSucceeded)
	virtual := 0
	for _, res := range rep.Results {
		if res.Clock == runtime.ClockVirtual {
			virtual++
		}
	}
	require.NotZero(t, virtual, "no schedule of the parallel agent ran in the bubble")
	assert.False(t, hasNote(rep), "the parallel agent's schedules ran on virtual time, yet: %q", rep.Notes)
}
