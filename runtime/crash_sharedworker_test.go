package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lazyQueue runs the jobs queued to it, in order, on a worker goroutine it
// starts on first use: an object Setup makes, whose worker the first
// delivery to use it starts, and every later delivery of the scenario
// shares.
type lazyQueue struct {
	once sync.Once
	jobs chan func()
}

func (q *lazyQueue) submit(ctx context.Context, job func() error) (<-chan error, error) {
	q.once.Do(func() {
		q.jobs = make(chan func(), 8)
		go func() {
			for j := range q.jobs {
				j()
			}
		}()
	})
	done := make(chan error, 1)
	select {
	case q.jobs <- func() { done <- job() }:
		return done, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func wait(ctx context.Context, done <-chan error) error {
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop ends the worker, if one was started.
func (q *lazyQueue) stop() {
	if q.jobs != nil {
		close(q.jobs)
	}
}

// The crash of a delivery ends the goroutines it started at their next
// call, the worker of a queue started on first use among them; the queue
// outlives the crash in the world Setup made, and the restart waits for
// its dead worker until the scenario stalls. A crashed process would lose
// the queue as well, and a restarted one would start a new worker. The
// stall message names the goroutine the crash ended, and says what to do.
// It stays an error: an agent whose restart waits for what the crash left
// in the world (a "processing" mark it clears only on success) looks the
// same from here, and that is the agent's bug (found by review: a warning
// there passed it with no error). A stall after a crash that ended no
// goroutine of the delivery says nothing of one.
func TestStallAfterACrashNamesTheGoroutineItEnded(t *testing.T) {
	create := &Op{Name: "create", Kind: KindWrite, Params: []string{"id"}, Idempotent: true}
	attach := &Op{Name: "attach", Kind: KindWrite, Params: []string{"id"}, Idempotent: true}
	stalls := func(rep *Report) (errs []Finding, warnings int) {
		for _, res := range append([]*Result{rep.Baseline}, rep.Results...) {
			for _, f := range res.Findings {
				switch {
				case f.Code != CodeStalled:
				case f.Severity == SeverityError:
					errs = append(errs, f)
				default:
					warnings++
				}
			}
		}
		return errs, warnings
	}
	t.Run("a worker started on first use", func(t *testing.T) {
		var q *lazyQueue
		agent := func(ctx context.Context) error {
			// Both queued before either is awaited, as a turn's calls are.
			a, err := q.submit(ctx, func() error {
				return traced(ctx, create, []any{"i-1"}, []any{"i-1"}, func(context.Context) error { return nil })
			})
			if err != nil {
				return err
			}
			b, err := q.submit(ctx, func() error {
				return traced(ctx, attach, []any{"i-1"}, []any{"i-1"}, func(context.Context) error { return nil })
			})
			if err != nil {
				return err
			}
			return errors.Join(wait(ctx, a), wait(ctx, b))
		}
		rep, err := Run(context.Background(), t.Name(), agent, StallTimeout(300*time.Millisecond),
			Setup(func(context.Context) error { q = &lazyQueue{}; return nil }),
			Teardown(func(context.Context) error { q.stop(); return nil }))
		require.NoError(t, err)
		require.True(t, rep.BaselineSucceeded)
		errs, warnings := stalls(rep)
		require.NotEmpty(t, errs, "no restart waited for the worker the crash ended")
		assert.Zero(t, warnings)
		for _, f := range errs {
			assert.Contains(t, f.Message, "the crash had ended goroutine")
		}
	})
	t.Run("a mark the crash left", func(t *testing.T) {
		var (
			mu   sync.Mutex
			mark bool // a row in the database: it outlives any process
		)
		marked := func() bool { mu.Lock(); defer mu.Unlock(); return mark }
		set := func(v bool) { mu.Lock(); mark = v; mu.Unlock() }
		agent := func(ctx context.Context) error {
			for marked() { // another worker is processing the order: wait for it
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(2 * time.Millisecond):
				}
			}
			set(true)
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, id := range []string{"o1", "mail-o1"} {
				wg.Go(func() {
					// A call and its confirmation, in a goroutine of the
					// agent's own.
					if errs[i] = traced(ctx, create, []any{id}, []any{id}, func(context.Context) error { return nil }); errs[i] == nil {
						errs[i] = traced(ctx, create, []any{id}, []any{id}, func(context.Context) error { return nil })
					}
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				return err // the mark stays: the agent's bug
			}
			set(false)
			return nil
		}
		rep, err := Run(context.Background(), t.Name(), agent, StallTimeout(300*time.Millisecond),
			Setup(func(context.Context) error { set(false); return nil }))
		require.NoError(t, err)
		require.True(t, rep.BaselineSucceeded)
		errs, warnings := stalls(rep)
		assert.NotEmpty(t, errs, "the restart waits for good for the mark the crash left, yet no stall is an error")
		assert.Zero(t, warnings)
	})
	t.Run("the agent's own stall", func(t *testing.T) {
		block := make(chan struct{})
		defer close(block)
		stuck := func(ctx context.Context) error {
			if err := traced(ctx, create, []any{"i-1"}, []any{"i-1"}, func(context.Context) error { return nil }); err != nil {
				return err
			}
			<-block
			return nil
		}
		rep, err := Run(context.Background(), t.Name(), stuck, StallTimeout(300*time.Millisecond))
		require.NoError(t, err)
		errs, _ := stalls(rep)
		require.NotEmpty(t, errs)
		for _, f := range errs {
			assert.NotContains(t, f.Message, "the crash had ended")
		}
	})
}
