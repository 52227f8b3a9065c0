package testkit_test

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

var setStatusOp = &runtime.Op{Name: "set_status", Kind: runtime.KindWrite, Params: []string{"id", "status"}, Idempotent: true}
var closeAllOp = &runtime.Op{Name: "close_all", Kind: runtime.KindWrite, Params: []string{"ids"}, Idempotent: true}

func tracedOp(ctx context.Context, op *runtime.Op, args []any, fn func(context.Context) error) (err error) {
	return tracedCall(ctx, op, args, args[:1], nil, fn)
}

// tracedCall runs fn as a call of op, as a generated wrapper does.
func tracedCall(ctx context.Context, op *runtime.Op, args, identity, entity []any, fn func(context.Context) error) (err error) {
	if !runtime.Enabled() {
		return fn(ctx)
	}
	c, cctx := runtime.Begin(ctx, op, args, identity, entity)
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

type job struct {
	ctx  context.Context
	id   string
	done chan error
}

// close_all hands set_status of each ticket to a pool of two workers the
// test started once (before the suite), and waits for both. The worker
// for t2 reads the ticket first (1 ms). The two nested calls run in
// parallel: every schedule should see them as one round.
func TestFanOutToAPreStartedPoolFormsOneRound(t *testing.T) {
	var mu sync.Mutex
	status := map[string]string{}
	jobs := make(chan job)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ended atomic.Int32 // workers that ended before stop (a crash must not end them)
	worker := func() {
		stopped := false
		defer func() {
			if !stopped {
				ended.Add(1)
			}
		}()
		for {
			select {
			case <-stop:
				stopped = true
				return
			case j := <-jobs:
				if j.id == "t2" {
					time.Sleep(time.Millisecond) // a read before the write
				}
				j.done <- tracedOp(j.ctx, setStatusOp, []any{j.id, "closed"}, func(context.Context) error {
					mu.Lock()
					status[j.id] = "closed"
					mu.Unlock()
					return nil
				})
			}
		}
	}
	for range 2 {
		wg.Go(worker)
	}
	defer func() { close(stop); wg.Wait() }()
	agent := func(ctx context.Context) error {
		return tracedOp(ctx, closeAllOp, []any{"t1,t2"}, func(ctx context.Context) error {
			var errs []error
			var dones []chan error
			for _, id := range []string{"t1", "t2"} {
				d := make(chan error, 1)
				dones = append(dones, d)
				select {
				case jobs <- job{ctx, id, d}:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			for _, d := range dones {
				select {
				case err := <-d:
					errs = append(errs, err)
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return errors.Join(errs...)
		})
	}
	rep := testkit.Run(t, agent, testkit.NoSummary(), testkit.StallTimeout(2*time.Second),
		testkit.Setup(func(context.Context) error { mu.Lock(); status = map[string]string{}; mu.Unlock(); return nil }),
		testkit.State(func() any { mu.Lock(); defer mu.Unlock(); return maps.Clone(status) }))
	n := 0
	for _, r := range rep.Results {
		if r.Scenario[:len(runtime.ScenarioInterleaving)] == runtime.ScenarioInterleaving {
			n++
		}
	}
	var batches []int
	for _, o := range rep.Baseline.Trace.Ops {
		batches = append(batches, o.Batch)
	}
	t.Logf("interleaving scenarios: %d; baseline batches %v", n, batches)
	if n == 0 {
		t.Errorf("the parallel nested calls were never interleaved")
	}
	if e := ended.Load(); e != 0 {
		t.Errorf("%d workers of the pool the test started were ended (the crash scenarios must not end them)", e)
	}
	if rep.Has(runtime.CodeStalled) || rep.Has(runtime.CodeGoroutineLeak) {
		t.Errorf("a stall or a goroutine_leak: the pool's workers are not the agent's")
	}
}
