package runtime

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deepWorld logs its writes in the order they land. outer (entity: the
// desk) writes x and y inside its own, in parallel, and y writes z inside
// its own; the agent writes b alongside outer.
type deepWorld struct {
	mu  sync.Mutex
	log []string
}

var deepOps = map[string]*Op{}

func deepOp(name string) *Op {
	if op, ok := deepOps[name]; ok {
		return op
	}
	op := &Op{Name: name, Kind: KindWrite, Params: []string{"v"}}
	deepOps[name] = op
	return op
}

func init() {
	for _, n := range []string{"outer", "x", "y", "z", "b"} {
		deepOp(n)
	}
}

func (w *deepWorld) call(ctx context.Context, name, ent string, fn func(context.Context) error) (err error) {
	c, cctx := Begin(ctx, deepOps[name], []any{name}, []any{name}, []any{ent})
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	w.mu.Lock()
	w.log = append(w.log, name+">")
	w.mu.Unlock()
	if fn != nil {
		err = fn(cctx)
	}
	w.mu.Lock()
	w.log = append(w.log, "<"+name)
	w.mu.Unlock()
	if lost := c.Finish(err); lost != nil {
		return lost
	}
	return err
}

func par(fns ...func() error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(fns))
	for i, fn := range fns {
		wg.Go(func() { errs[i] = fn() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (w *deepWorld) agent(ctx context.Context) error {
	return par(
		func() error {
			return w.call(ctx, "outer", "desk", func(ctx context.Context) error {
				return par(
					func() error { return w.call(ctx, "x", "t", nil) },
					func() error {
						return w.call(ctx, "y", "t", func(ctx context.Context) error { return w.call(ctx, "z", "t", nil) })
					},
				)
			})
		},
		func() error { return w.call(ctx, "b", "t", nil) },
	)
}

// Every explored schedule of an agent whose round holds a call that makes
// calls inside its own (a nested round of two, one of which nests again)
// replays to the same order of writes, and the same schedule.
func TestNestedRoundsReplay(t *testing.T) {
	ctx := context.Background()
	w := &deepWorld{}
	opts := []Option{
		Setup(func(context.Context) error { w.mu.Lock(); w.log = nil; w.mu.Unlock(); return nil }),
		Outcome(func() any { w.mu.Lock(); defer w.mu.Unlock(); return slices.Clone(w.log) }),
	}
	s := NewSuite("deep", w.agent, opts...)
	defer s.Report() // ends the suite's watch: wrappers go inactive again
	_, err := s.Baseline(ctx)
	require.NoError(t, err)
	require.True(t, s.Parallel(ctx))
	planned := s.PlannedSchedules()
	var runs []*Result
	ex, err := s.Interleavings(ctx, func(r *Result) { runs = append(runs, r) })
	require.NoError(t, err)
	assert.Equal(t, planned, ex.Explored)
	require.NotEmpty(t, runs)
	outcomes := map[string]bool{}
	for _, r := range runs {
		outcomes[r.Outcome] = true
		assert.Empty(t, r.Trace.Notes, r.Schedule)
		rs := NewSuite("deep", w.agent, append(slices.Clone(opts), Replay(r.Schedule))...)
		defer rs.Report()
		_, err := rs.Baseline(ctx)
		require.NoError(t, err)
		var again []*Result
		_, err = rs.Interleavings(ctx, func(r *Result) { again = append(again, r) })
		require.NoError(t, err, r.Schedule)
		require.Len(t, again, 1)
		assert.Equal(t, r.Schedule, again[0].Schedule)
		assert.Equal(t, r.Outcome, again[0].Outcome, r.Schedule)
	}
	t.Logf("%d schedules, %d outcomes", len(runs), len(outcomes))
	assert.Greater(t, len(outcomes), 1)
}
