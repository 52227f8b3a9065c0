package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	staggerCreate = &runtime.Op{Name: "create_invoice", Kind: runtime.KindWrite, Params: []string{"invoice"}}
	staggerAttach = &runtime.Op{Name: "attach_invoice", Kind: runtime.KindWrite, Params: []string{"invoice"}, After: []string{"create_invoice"}}
)

// callINV1 makes a traced call of op on invoice INV-1.
func callINV1(ctx context.Context, op *runtime.Op) error {
	args := []any{"INV-1"}
	c, _ := runtime.Begin(ctx, op, args, args, nil)
	if err := c.Start(); err != nil {
		return err
	}
	return c.Finish(nil)
}

// staggeredTurn dispatches create_invoice and attach_invoice (after=
// create_invoice) as the parallel calls of one model turn; the attach's
// goroutine first waits in wait, which gets the created signal, closed
// once create_invoice has returned.
func staggeredTurn(wait func(ctx context.Context, created <-chan struct{}) error) func(context.Context) error {
	return func(ctx context.Context) error {
		created := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() {
			errs[0] = callINV1(ctx, staggerCreate)
			close(created)
		})
		wg.Go(func() {
			if errs[1] = wait(ctx, created); errs[1] == nil {
				errs[1] = callINV1(ctx, staggerAttach)
			}
		})
		wg.Wait()
		return errors.Join(errs...)
	}
}

// A dependent call that the agent dispatches at once but staggers with a
// select on time.After (a rate limiter's token, a pause of its own) is in
// flight with its prerequisite, and dependent_calls_concurrent says so:
// its goroutine, parked on a channel of the agent's own, counts as busy
// for a moment before the scheduler closes the round. It did not, and the
// verdict was SAFE with no warning, on real time and with VirtualTime.
// Waiting for the prerequisite to return is what fixes it, and passes.
// (Found by red-team: TestStaggeredDependentCalls/time_after_select.)
func TestStaggeredDependentCallIsCaught(t *testing.T) {
	stagger := func(ctx context.Context, _ <-chan struct{}) error {
		select {
		case <-time.After(3 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	await := func(ctx context.Context, created <-chan struct{}) error {
		select {
		case <-created:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, c := range []struct {
		name    string
		wait    func(context.Context, <-chan struct{}) error
		virtual bool
		want    bool
	}{
		{"select on time.After", stagger, false, true},
		{"select on time.After, VirtualTime", stagger, true, true},
		{"waits for the prerequisite", await, false, false},
		{"waits for the prerequisite, VirtualTime", await, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := []testkit.Option{testkit.NoSummary()}
			if c.virtual {
				opts = append(opts, testkit.VirtualTime())
			}
			rep := testkit.Run(t, staggeredTurn(c.wait), opts...)
			require.True(t, rep.BaselineSucceeded)
			assert.Equal(t, c.want, rep.Has(runtime.CodeDependentCallsConcurrent), "%v", rep.Findings)
		})
	}
}

// The same stagger in a worker the agent started before its turn: the
// worker waits for a job, and the job's attach waits 3 ms first. Parked
// on the jobs channel through the first round (a lookup), the worker had
// used up its moment as busy there, and the stagger went unseen: SAFE
// with no warning. Where a goroutine parks counts, not only that it does.
// (Found by review.)
func TestStaggerInAWorkerParkedBeforeIsCaught(t *testing.T) {
	lookup := &runtime.Op{Name: "lookup", Kind: runtime.KindRead, Params: []string{"invoice"}}
	agent := func(ctx context.Context) error {
		jobs, done := make(chan struct{}), make(chan error, 1)
		go func() { // the worker
			err := ctx.Err()
			defer func() { done <- err }() // also when a crash ends it
			select {
			case <-jobs:
			case <-ctx.Done():
				return
			}
			select {
			case <-time.After(3 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			err = callINV1(ctx, staggerAttach)
		}()
		if err := callINV1(ctx, lookup); err != nil {
			return err
		}
		var wg sync.WaitGroup
		var cerr error
		wg.Go(func() { cerr = callINV1(ctx, staggerCreate) })
		jobs <- struct{}{}
		wg.Wait()
		return errors.Join(cerr, <-done)
	}
	for _, virtual := range []bool{false, true} {
		t.Run(fmt.Sprintf("virtual=%v", virtual), func(t *testing.T) {
			opts := []testkit.Option{testkit.NoSummary()}
			if virtual {
				opts = append(opts, testkit.VirtualTime())
			}
			rep := testkit.Run(t, agent, opts...)
			require.True(t, rep.BaselineSucceeded)
			assert.True(t, rep.Has(runtime.CodeDependentCallsConcurrent), "%v", rep.Findings)
		})
	}
}

// An agent whose own goroutine paces its dispatches on a timer's channel
// (a client-side rate limit) starts create_invoice, waits 2 ms, and starts
// attach_invoice (after=create_invoice): the two are in flight together in
// production. The scheduler took create's round at once, while the
// invocation's goroutine waited on the timer, and ran create to its end
// before attach was dispatched: SAFE on every run (red team rX, MISS 4).
// Such a wait, at a line that receives from a timer's channel or in a
// select with such a case, now counts as busy for a moment, as a worker's
// select on a timer does, and the pair is one round. The agent that waits
// for create's answer passes, and so does a fan-in that waits for the
// answer or a timeout. Likewise under VirtualTime.
func TestADispatchPacedByATimerChannelIsInFlightWithTheOneBefore(t *testing.T) {
	type wait func(ctx context.Context, tk *time.Ticker, created <-chan struct{})
	for _, c := range []struct {
		name  string
		wait  wait
		found bool
	}{
		{"ticker", func(_ context.Context, tk *time.Ticker, _ <-chan struct{}) { <-tk.C }, true},
		{"time.After", func(context.Context, *time.Ticker, <-chan struct{}) { <-time.After(2 * time.Millisecond) }, true},
		{"select on the ticker", func(ctx context.Context, tk *time.Ticker, _ <-chan struct{}) {
			select {
			case <-tk.C:
			case <-ctx.Done():
			}
		}, true},
		{"waits for the answer", func(_ context.Context, _ *time.Ticker, created <-chan struct{}) { <-created }, false},
		{"waits for the answer or a timeout", func(_ context.Context, _ *time.Ticker, created <-chan struct{}) {
			select {
			case <-created:
			case <-time.After(5 * time.Second):
			}
		}, false},
	} {
		for _, clk := range onEachClock(c.name) {
			t.Run(clk.name, func(t *testing.T) {
				agent := func(ctx context.Context) error {
					tk := time.NewTicker(2 * time.Millisecond)
					defer tk.Stop()
					created := make(chan struct{})
					var wg sync.WaitGroup
					errs := make([]error, 2)
					wg.Go(func() {
						errs[0] = callINV1(ctx, staggerCreate)
						close(created)
					})
					c.wait(ctx, tk, created)
					wg.Go(func() { errs[1] = callINV1(ctx, staggerAttach) })
					wg.Wait()
					return errors.Join(errs...)
				}
				rep := testkit.Run(t, agent, clk.opts...)
				require.True(t, rep.BaselineSucceeded)
				assert.Equal(t, c.found, rep.Has(runtime.CodeDependentCallsConcurrent), "%v", rep.Findings)
			})
		}
	}
}

// A dispatcher that waits at one select for its ticker and for answers,
// and sends a job on each tick: a slow lookup first, whose answer it
// waits for, then create_invoice, and on the next tick attach_invoice
// (after=create_invoice) without waiting for create's answer. Parked at
// the same select since before the lookup, it had used its moment as
// busy up while the lookup ran, and create's round was taken alone: SAFE
// on every run, with a 1 or 2 ms ticker, on real time and with
// VirtualTime (red team rY T5). A timer-paced dispatcher now counts as
// busy for a moment after the latest call reached its gate; the one that
// waits for create's answer before it sends attach passes.
func TestATickerLoopThatWaitedBeforeStillPacesItsNextDispatch(t *testing.T) {
	lookup := &runtime.Op{Name: "lookup", Kind: runtime.KindRead, Params: []string{"invoice"}}
	for _, waits := range []bool{false, true} {
		for _, clk := range onEachClock(map[bool]string{false: "sends attach on the next tick", true: "waits for create's answer"}[waits]) {
			t.Run(clk.name, func(t *testing.T) {
				agent := func(ctx context.Context) error {
					tk := time.NewTicker(time.Millisecond)
					defer tk.Stop()
					results := make(chan error, 3)
					jobs := []func(){
						func() {
							results <- func() error {
								args := []any{"INV-1"}
								c, _ := runtime.Begin(ctx, lookup, args, args, nil)
								if err := c.Start(); err != nil {
									return err
								}
								time.Sleep(12 * time.Millisecond)
								return c.Finish(nil)
							}()
						},
						func() { results <- callINV1(ctx, staggerCreate) },
						func() { results <- callINV1(ctx, staggerAttach) },
					}
					sent, answered, pending := 0, 0, 0
					var errs []error
					for answered < len(jobs) {
						select {
						case <-tk.C:
							// The lookup is a barrier; attach waits for
							// create's answer only where waits is set.
							if sent < len(jobs) && (sent == 0 || pending == 0 || !waits && sent == 2) {
								go jobs[sent]()
								sent++
								pending++
							}
						case err := <-results:
							errs = append(errs, err)
							answered++
							pending--
						case <-ctx.Done():
							return ctx.Err()
						}
					}
					return errors.Join(errs...)
				}
				rep := testkit.Run(t, agent, clk.opts...)
				require.True(t, rep.BaselineSucceeded)
				assert.Equal(t, !waits, rep.Has(runtime.CodeDependentCallsConcurrent), "%v", rep.Findings)
			})
		}
	}
}

// The same pacing as a loop over the ticker's channel (for range tk.C):
// its line receives with no "<-" in it, and it passed (red team rY T7).
func TestADispatchLoopOverATickerIsPaced(t *testing.T) {
	for _, clk := range onEachClock("") {
		t.Run(clk.name, func(t *testing.T) {
			agent := func(ctx context.Context) error {
				tk := time.NewTicker(2 * time.Millisecond)
				defer tk.Stop()
				var wg sync.WaitGroup
				ops := []*runtime.Op{staggerCreate, staggerAttach}
				errs := make([]error, len(ops))
				i := 0
				for range tk.C {
					k := i
					wg.Go(func() { errs[k] = callINV1(ctx, ops[k]) })
					if i++; i == len(ops) {
						break
					}
				}
				wg.Wait()
				return errors.Join(errs...)
			}
			rep := testkit.Run(t, agent, clk.opts...)
			require.True(t, rep.BaselineSucceeded)
			assert.True(t, rep.Has(runtime.CodeDependentCallsConcurrent), "%v", rep.Findings)
		})
	}
}

// onEachClock names the two clocks a test of a timer-paced dispatch runs
// on, after name: real time (name itself, or "real time"), and
// VirtualTime (", VirtualTime" after it), each with its options.
func onEachClock(name string) []struct {
	name string
	opts []testkit.Option
} {
	onReal, onVirtual := name, name+", VirtualTime"
	if name == "" {
		onReal, onVirtual = "real time", "VirtualTime"
	}
	return []struct {
		name string
		opts []testkit.Option
	}{
		{onReal, []testkit.Option{testkit.NoSummary()}},
		{onVirtual, []testkit.Option{testkit.NoSummary(), testkit.VirtualTime()}},
	}
}

// A dependent call that a time.AfterFunc makes a moment after its
// prerequisite was dispatched: the agent starts create_invoice, arms
// time.AfterFunc(1 ms) to attach the invoice, and waits for both. In
// production the two are in flight together. A pending AfterFunc has no
// goroutine, and the invocation's goroutine waited in wg.Wait, which no
// timer ends: the scheduler took create's round alone, and the buggy agent
// was SAFE on every run (red team rX, MISS 3). A goroutine of the agent's
// blocked in a function that armed such a timer on an earlier line
// counts as busy for a moment after the latest call reached its gate
// (timerwait.go). The agent whose timer's function waits for create's
// answer passes.
func TestADependentCallAnAfterFuncMakesIsInFlightWithTheOneBefore(t *testing.T) {
	for _, waits := range []bool{false, true} {
		for _, clk := range onEachClock(map[bool]string{false: "attaches 1 ms after", true: "waits for create's answer"}[waits]) {
			t.Run(clk.name, func(t *testing.T) {
				agent := func(ctx context.Context) error {
					created := make(chan struct{})
					var wg sync.WaitGroup
					errs := make([]error, 2)
					wg.Go(func() {
						errs[0] = callINV1(ctx, staggerCreate)
						close(created)
					})
					wg.Add(1)
					time.AfterFunc(time.Millisecond, func() {
						defer wg.Done()
						if waits {
							<-created
						}
						errs[1] = callINV1(ctx, staggerAttach)
					})
					wg.Wait()
					return errors.Join(errs...)
				}
				rep := testkit.Run(t, agent, clk.opts...)
				require.True(t, rep.BaselineSucceeded)
				assert.Equal(t, !waits, rep.Has(runtime.CodeDependentCallsConcurrent), "%v", rep.Findings)
			})
		}
	}
}
