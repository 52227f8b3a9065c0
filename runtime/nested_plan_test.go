package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nestWorld is a desk whose close_all (entity: the desk itself) sets t1
// closed through set_status with the context it was given, while the
// agent, in the same turn, sets t1 open with its own set_status. The two
// calls of the round declare different entities, but close_all makes a
// call inside its own: every order of the round is explored (shapeWith).
type nestWorld struct {
	mu     sync.Mutex
	status map[string]string
}

var (
	nestSetOp   = &Op{Name: "set_status", Kind: KindWrite, Params: []string{"id", "status"}, Idempotent: true}
	nestCloseOp = &Op{Name: "close_all", Kind: KindWrite, Params: []string{"ids"}, Idempotent: true}
)

func (w *nestWorld) call(ctx context.Context, op *Op, args, entity []any, fn func(context.Context) error) (err error) {
	c, cctx := Begin(ctx, op, args, args, entity)
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	err = fn(cctx)
	if lost := c.Finish(err); lost != nil {
		return lost
	}
	return err
}

func (w *nestWorld) set(ctx context.Context, id, st string) error {
	return w.call(ctx, nestSetOp, []any{id, st}, []any{id}, func(context.Context) error {
		w.mu.Lock()
		w.status[id] = st
		w.mu.Unlock()
		return nil
	})
}

func (w *nestWorld) agent(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() {
		errs[0] = w.call(ctx, nestCloseOp, []any{"t1"}, []any{"desk"}, func(ctx context.Context) error { return w.set(ctx, "t1", "closed") })
	})
	wg.Go(func() { errs[1] = w.set(ctx, "t1", "open") })
	wg.Wait()
	return errors.Join(errs...)
}

func nestOptions(w *nestWorld, opts ...Option) []Option {
	return append([]Option{
		Setup(func(context.Context) error { w.mu.Lock(); w.status = map[string]string{}; w.mu.Unlock(); return nil }),
		Outcome(func() any { w.mu.Lock(); defer w.mu.Unlock(); return w.status["t1"] }),
	}, opts...)
}

// PlannedSchedules, the exploration's Space and a sharded exploration plan
// from the baseline's rounds: they must see the orders of an op that makes
// calls inside its own as the exploration does. Before, the baseline's
// rounds were shaped before the baseline's trace existed (no outer ops):
// one schedule was planned and six ran, and two shards ran one schedule
// between them where the unsharded exploration ran six.
func TestPlanCountsTheOrdersOfAnOuterOp(t *testing.T) {
	ctx := context.Background()
	w := &nestWorld{}
	s := NewSuite("nest", w.agent, nestOptions(w)...)
	defer s.Report() // ends the suite's watch: wrappers go inactive again
	_, err := s.Baseline(ctx)
	require.NoError(t, err)
	require.True(t, s.Parallel(ctx))
	planned := s.PlannedSchedules()
	ex, err := s.Interleavings(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, 6, ex.Explored, "close_all and set_status in one class: (2*2)!/2^2 orders")
	assert.Equal(t, ex.Explored, planned, "PlannedSchedules")
	assert.Equal(t, ex.Explored, ex.Space, "Space")

	whole, err := Run(ctx, "nest", w.agent, nestOptions(w)...)
	require.NoError(t, err)
	want := schedulesOf(whole)
	require.Len(t, want, 6)
	union := map[string]int{}
	for i := 1; i <= 2; i++ {
		rep, err := Run(ctx, "nest", w.agent, nestOptions(w, ShardOf(i, 2))...)
		require.NoError(t, err)
		require.NotNil(t, rep.Shard)
		assert.Equal(t, len(want), rep.Shard.Planned, "shard %d plans the whole exploration", i)
		for _, sc := range schedulesOf(rep) {
			union[sc]++
		}
	}
	assert.Len(t, union, len(want))
	for _, sc := range want {
		assert.Equal(t, 1, union[sc], "schedule %s in %d shards", sc, union[sc])
	}
}
