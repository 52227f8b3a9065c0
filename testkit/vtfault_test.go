package testkit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
)

var (
	vtPutOp     = &runtime.Op{Name: "vt_put", Kind: runtime.KindWrite, Params: []string{"key"}, Idempotent: true}
	vtCreateOp  = &runtime.Op{Name: "vt_create_order", Kind: runtime.KindWrite, Params: []string{"order"}}
	vtAttachOp  = &runtime.Op{Name: "vt_attach", Kind: runtime.KindWrite, Params: []string{"order"}, After: []string{"vt_create_order"}}
	vtWaitOp    = &runtime.Op{Name: "vt_wait_approval", Kind: runtime.KindRead, Params: []string{"order"}}
	vtApproveOp = &runtime.Op{Name: "vt_approve", Kind: runtime.KindWrite, Params: []string{"order"}, Idempotent: true}
)

// poolOf2 runs calls on a pool of two workers the agent starts, fed
// through a channel in order, as an agent bounds a turn's parallel calls.
// After a crash its goroutines wait for good, as the agent's would; stop
// lets them go at the test's end, for the leak check (a channel made
// where the agent runs: one made outside a bubble, waited on inside it,
// is no durable block, and the bubble's clock would stop).
func poolOf2(stop <-chan struct{}, calls ...func() error) error {
	type job struct {
		fn   func() error
		done chan error
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case j, ok := <-jobs:
					if !ok {
						return
					}
					j.done <- j.fn()
				case <-stop:
					return
				}
			}
		})
	}
	dones := make([]chan error, len(calls))
	for i, c := range calls {
		dones[i] = make(chan error, 1)
		select { // after a crash, the workers are gone: blocked for good
		case jobs <- job{c, dones[i]}:
		case <-stop:
			return errors.New("stopped")
		}
	}
	close(jobs)
	var errs []error
	for _, d := range dones {
		select {
		case err := <-d:
			errs = append(errs, err)
		case <-stop:
			return errors.New("stopped")
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// With VirtualTime, an agent with parallel calls had its fault scenarios
// run in the bubble, where a fault may leave the agent's goroutines
// blocked for good: the crashed delivery's feeder sending to the workers
// the crash ended, a wait for an approval whose request was lost. A bubble
// cannot end with them, and testing/synctest ended the test binary
// ("deadlock: main bubble goroutine has exited but blocked goroutines
// remain", "all goroutines in bubble are blocked"), for a correct agent
// too (red team rX, 5 runs of 5 each). Fault scenarios now run on real
// time, which says what it says without VirtualTime: the crashed delivery
// taken as gone, a stalled scenario naming where it is blocked. The
// suites run in a child process, so that the binary's end fails this test
// instead of every later one.
func TestVirtualTimeFaultsThatLeaveGoroutinesBlocked(t *testing.T) {
	if !inChild(t) {
		return
	}
	// The stop channels of the runs on real time, closed at the end: the
	// goroutines a fault left waiting there are let go. A bubble's run
	// (its clock at 2000-01-01, testing/synctest's) ends with none, and
	// its channels may not be closed from outside it.
	var (
		stopMu sync.Mutex
		stops  []chan struct{}
	)
	defer func() {
		stopMu.Lock()
		defer stopMu.Unlock()
		for _, c := range stops {
			close(c)
		}
	}()
	newStop := func() chan struct{} {
		c := make(chan struct{})
		if time.Now().Year() > 2000 {
			stopMu.Lock()
			stops = append(stops, c)
			stopMu.Unlock()
		}
		return c
	}
	var (
		mu       sync.Mutex
		keys     map[string]bool
		orders   map[string]bool
		attached map[string]bool
		approved chan struct{}
	)
	reset := testkit.Setup(func(context.Context) error {
		mu.Lock()
		keys, orders, attached, approved = map[string]bool{}, map[string]bool{}, map[string]bool{}, make(chan struct{})
		mu.Unlock()
		return nil
	})
	state := testkit.State(func() any {
		mu.Lock()
		defer mu.Unlock()
		return map[string]any{"keys": keys, "orders": orders, "attached": attached}
	})
	opts := []testkit.Option{testkit.NoSummary(), testkit.VirtualTime(), testkit.StallTimeout(time.Second), reset, state}
	put := func(ctx context.Context, k string) error {
		return tracedCall(ctx, vtPutOp, []any{k}, []any{k}, nil, func(context.Context) error {
			mu.Lock()
			keys[k] = true
			mu.Unlock()
			return nil
		})
	}
	create := func(ctx context.Context, o string) error {
		return tracedCall(ctx, vtCreateOp, []any{o}, []any{o}, []any{o}, func(context.Context) error {
			mu.Lock()
			orders[o] = true
			mu.Unlock()
			return nil
		})
	}
	attach := func(ctx context.Context, o string) error {
		return tracedCall(ctx, vtAttachOp, []any{o}, []any{o}, []any{o}, func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			if !orders[o] {
				return errors.New("no such order " + o)
			}
			attached[o] = true
			return nil
		})
	}
	t.Run("a correct agent's pool of two", func(t *testing.T) {
		rep := testkit.Run(t, func(ctx context.Context) error {
			return poolOf2(newStop(), func() error { return put(ctx, "a") }, func() error { return put(ctx, "b") }, func() error { return put(ctx, "c") })
		}, opts...)
		assert.True(t, rep.Safe, "%v", rep.Findings)
		for _, res := range rep.Results {
			if res.Fault != nil {
				assert.Equal(t, runtime.ClockReal, res.Clock, res.Scenario)
			}
		}
	})
	t.Run("a dependent call in the pool is caught", func(t *testing.T) {
		rep := testkit.Run(t, func(ctx context.Context) error {
			return poolOf2(newStop(), func() error { return create(ctx, "O1") }, func() error { return attach(ctx, "O1") })
		}, opts...)
		assert.True(t, rep.Has(runtime.CodeDependentCallsConcurrent), "%v", rep.Findings)
	})
	t.Run("a wait for an approval whose request was lost stalls", func(t *testing.T) {
		rep := testkit.Run(t, func(ctx context.Context) error {
			stop := newStop()
			var wg sync.WaitGroup
			var werr, aerr error
			wg.Go(func() {
				werr = tracedCall(ctx, vtWaitOp, []any{"O1"}, []any{"O1"}, nil, func(ctx context.Context) error {
					mu.Lock()
					ch := approved
					mu.Unlock()
					select { // no timeout: the approval comes, in production
					case <-ch:
						return nil
					case <-stop:
						return errors.New("stopped")
					case <-ctx.Done():
						return ctx.Err()
					}
				})
			})
			wg.Go(func() {
				aerr = tracedCall(ctx, vtApproveOp, []any{"O1"}, []any{"O1"}, nil, func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					select {
					case <-approved:
					default:
						close(approved)
					}
					return nil
				})
			})
			wg.Wait()
			return errors.Join(werr, aerr)
		}, opts...)
		assert.True(t, rep.Has(runtime.CodeStalled), "%v", rep.Findings)
	})
}
