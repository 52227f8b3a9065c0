package runtime

import (
	"context"
	"errors"
	"strings"
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
// the queue as well, and a restarted one would start a new worker: the
// stall is the harness's crash, not the agent's, and was an error finding
// that failed a correct agent. The scenario is now inconclusive, its
// stall a warning that names the goroutine the crash ended. A stall with
// no such goroutine is still an error.
func TestRestartWaitingForAWorkerTheCrashEndedIsInconclusive(t *testing.T) {
	create := &Op{Name: "create", Kind: KindWrite, Params: []string{"id"}, Idempotent: true}
	attach := &Op{Name: "attach", Kind: KindWrite, Params: []string{"id"}, Idempotent: true}
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
	var stalls int
	for _, res := range rep.Results {
		for _, f := range res.Findings {
			if f.Code != CodeStalled {
				continue
			}
			stalls++
			assert.Equal(t, SeverityWarning, f.Severity, "%s: %s", res.Scenario, f.Message)
			assert.Contains(t, f.Message, "the crash had ended goroutine")
			assert.True(t, res.Inconclusive, res.Scenario)
		}
	}
	assert.Positive(t, stalls, "no restart waited for the worker the crash ended")
	assert.Empty(t, rep.Errors())

	// An agent that blocks for good by itself still fails its scenario.
	block := make(chan struct{})
	defer close(block)
	stuck := func(ctx context.Context) error {
		if err := traced(ctx, create, []any{"i-1"}, []any{"i-1"}, func(context.Context) error { return nil }); err != nil {
			return err
		}
		<-block
		return nil
	}
	rep, err = Run(context.Background(), t.Name()+"/stuck", stuck, StallTimeout(300*time.Millisecond))
	require.NoError(t, err)
	var msgs []string
	for _, f := range rep.Errors() {
		if f.Code == CodeStalled {
			msgs = append(msgs, f.Message)
		}
	}
	assert.NotEmpty(t, msgs, "the agent's own stall is no error")
	assert.NotContains(t, strings.Join(msgs, "\n"), "the crash had ended")
}
