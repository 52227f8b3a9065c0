package testkit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// setupPool is a worker pool of the shape many agents' tools run on: its
// workers are started by a Setup hook (once for the test, or once per
// scenario and stopped in Teardown), not by the agent, and fed over a
// channel; each job carries the agent's context, which the worker passes
// to the traced tool it calls.
type setupPool struct {
	jobs chan poolJob
	idle chan poolJob // a growing pool's workers waiting for a job
	stop chan struct{}
	wg   sync.WaitGroup
	live atomic.Int32 // workers running
}

type poolJob struct {
	ctx  context.Context
	l    *tools.Ledger
	key  string
	done chan error
}

func startSetupPool(workers int) *setupPool {
	p := &setupPool{jobs: make(chan poolJob), stop: make(chan struct{})}
	for range workers {
		p.live.Add(1)
		p.wg.Go(p.work)
	}
	return p
}

func (p *setupPool) work() {
	defer p.live.Add(-1) // runs on runtime.Goexit too
	for {
		select {
		case <-p.stop:
			return
		case j := <-p.jobs:
			j.done <- j.l.PutTraced(j.ctx, j.key, "closed")
		}
	}
}

// startGrowingPool starts a pool that has no worker at first: its
// dispatcher (started by Setup) starts one when a job comes and none is
// idle, and the worker then stays for the next jobs.
func startGrowingPool() *setupPool {
	p := &setupPool{jobs: make(chan poolJob), idle: make(chan poolJob), stop: make(chan struct{})}
	p.wg.Go(func() {
		for {
			select {
			case <-p.stop:
				return
			case j := <-p.jobs:
				select {
				case p.idle <- j:
				default:
					p.live.Add(1)
					p.wg.Go(func() {
						defer p.live.Add(-1)
						for {
							j.done <- j.l.PutTraced(j.ctx, j.key, "closed")
							select {
							case <-p.stop:
								return
							case j = <-p.idle:
							}
						}
					})
				}
			}
		}
	})
	return p
}

func (p *setupPool) close() {
	close(p.stop)
	p.wg.Wait()
}

// closeAll hands one put per key to the pool and waits for each answer,
// going on after an error as a batch job does, and returns them joined. It
// trusts the pool to answer (plain channel operations, no select on ctx),
// as code written against a pool that never loses a worker does.
func closeAll(ctx context.Context, p *setupPool, l *tools.Ledger, keys ...string) error {
	var errs []error
	for _, k := range keys {
		done := make(chan error, 1)
		p.jobs <- poolJob{ctx, l, k, done}
		errs = append(errs, <-done)
	}
	return errors.Join(errs...)
}

// A crash ends the invocation: a later call of it is not executed. When
// that call comes from a worker of a pool a Setup hook started once for
// the whole test, the worker is not the invocation's to end: the call is
// refused with the crash's error instead, the worker answers its job and
// lives on for the later scenarios, and the crash scenario says so. Before,
// the worker was ended (runtime.Goexit): the crashed delivery waited
// forever for its answer, and every later scenario found no worker.
func TestCrashDoesNotEndAWorkerSetupStarted(t *testing.T) {
	var (
		l    *tools.Ledger
		pool *setupPool
		once sync.Once
	)
	defer func() {
		if pool != nil {
			pool.close()
		}
	}()
	agent := func(ctx context.Context) error { return closeAll(ctx, pool, l, "a", "b") }
	ft := &fakeT{name: "TestPoolCrash"}
	rep := testkit.Run(ft, agent, testkit.NoSummary(), testkit.StallTimeout(2*time.Second),
		testkit.With(runtime.Setup(func(context.Context) error {
			once.Do(func() { pool = startSetupPool(1) }) // one worker, for the whole test
			l = &tools.Ledger{}
			return nil
		})))
	require.NotNil(t, rep.Baseline)
	assert.False(t, rep.Has(runtime.CodeStalled), "no scenario stalled")
	assert.Equal(t, int32(1), pool.live.Load(), "the pool kept its worker")

	var crash *runtime.Result
	for _, r := range rep.Results {
		if r.Scenario == runtime.ScenarioCrashRestart+"/put#1" {
			crash = r
		}
	}
	require.NotNil(t, crash, "the crash scenario ran")
	assert.True(t, crash.FaultFired)
	assert.Equal(t, 2, crash.Trace.Invocations, "the invocation was delivered again")
	assert.False(t, crash.Failed, "the restart succeeded: %s", crash.Error)
	var stopped []string
	for _, o := range crash.Trace.Ops {
		if o.Invocation == 1 && strings.Contains(o.Error, "the invocation had crashed") {
			stopped = append(stopped, o.ID)
		}
	}
	assert.Equal(t, []string{"1:put#2"}, stopped, "the crashed invocation's next call was not executed")
	assert.Contains(t, strings.Join(crash.Trace.Notes, "\n"), "was not ended", "the scenario says how the crash was injected")
}

// The workers of a pool that a Setup hook started (and Teardown stops, or
// that lives for the test) make the agent's calls and are still there when
// the agent returns: the agent did not start them and has none of them to
// wait for, so the baseline warns of no goroutine_leak. A goroutine the
// agent starts itself, beside the pool, and leaves running still is one.
func TestSetupPoolIsNoLeakOfTheAgent(t *testing.T) {
	for _, c := range []struct {
		name                 string
		perScenario, growing bool
	}{
		{name: "per scenario", perScenario: true},
		{name: "living for the test"},
		{name: "growing per job", perScenario: true, growing: true},
	} {
		perScenario := c.perScenario
		t.Run(c.name, func(t *testing.T) {
			var (
				l      *tools.Ledger
				pool   *setupPool
				starts int
			)
			opts := []testkit.Option{testkit.NoSummary(), testkit.With(runtime.OnlyScenario(runtime.ScenarioBaseline)),
				testkit.Setup(func(context.Context) error {
					if perScenario || pool == nil {
						if c.growing {
							pool = startGrowingPool()
						} else {
							pool = startSetupPool(2)
						}
						starts++
					}
					l = &tools.Ledger{}
					return nil
				})}
			if perScenario {
				opts = append(opts, testkit.Teardown(func(context.Context) error { pool.close(); return nil }))
			}
			ft := &fakeT{name: "TestPoolLeak"}
			rep := testkit.Run(ft, func(ctx context.Context) error { return closeAll(ctx, pool, l, "a", "b") }, opts...)
			require.False(t, rep.Baseline.Failed, rep.Baseline.Error)
			require.Len(t, rep.Baseline.Trace.Ops, 2)
			for _, f := range rep.Baseline.Findings {
				assert.NotEqual(t, runtime.CodeGoroutineLeak, f.Code, f.Message)
			}
			assert.False(t, rep.Baseline.Inconclusive)

			// The agent's own goroutine, left running, is still told.
			release := make(chan struct{})
			rep = testkit.Run(ft, func(ctx context.Context) error {
				called := make(chan struct{})
				go func() { // fire and forget, beside the pool
					_ = l.PostTraced(ctx, "audit", "closed a, b")
					close(called)
					<-release
				}()
				<-called
				return closeAll(ctx, pool, l, "a", "b")
			}, opts...)
			close(release)
			var leaks []runtime.Finding
			for _, f := range rep.Baseline.Findings {
				if f.Code == runtime.CodeGoroutineLeak {
					leaks = append(leaks, f)
				}
			}
			require.Len(t, leaks, 1, "the agent's own goroutine is a leak")
			assert.Contains(t, leaks[0].Message, "TestSetupPoolIsNoLeakOfTheAgent")
			assert.NotContains(t, leaks[0].Message, "setupPool", "the pool's workers are not the agent's")
			if !perScenario {
				pool.close()
				assert.Equal(t, 1, starts)
			}
		})
	}
}

// Two helpers each give a Setup and its Teardown: the first starts the
// pool, the second (a database) fails. The pool's Teardown, given with the
// Setup that succeeded, still runs, and the baseline is inconclusive with
// the setup error. Before, no Teardown ran when a Setup failed, and the
// pool the first Setup started was left running.
func TestTeardownOfASucceededSetupRunsWhenALaterSetupFails(t *testing.T) {
	var (
		l             *tools.Ledger
		pool          *setupPool
		starts, stops int
	)
	defer func() {
		if starts > stops {
			pool.close() // left running: the test fails below
		}
	}()
	withPool := []testkit.Option{
		testkit.With(runtime.Setup(func(context.Context) error { pool = startSetupPool(2); starts++; return nil })),
		testkit.With(runtime.Teardown(func(context.Context) error { pool.close(); stops++; return nil })),
	}
	dbTornDown := false
	withDB := []testkit.Option{
		testkit.With(runtime.Setup(func(context.Context) error { return errors.New("db down") })),
		testkit.With(runtime.Teardown(func(context.Context) error { dbTornDown = true; return nil })),
	}
	ft := &fakeT{name: "TestPoolAndDB"}
	rep := testkit.Run(ft, func(ctx context.Context) error { return closeAll(ctx, pool, l, "a") },
		append(append([]testkit.Option{testkit.NoSummary()}, withPool...), withDB...)...)
	assert.Equal(t, 1, starts)
	assert.Equal(t, starts, stops, "the pool's Teardown ran")
	assert.Equal(t, int32(0), pool.live.Load(), "no worker left running")
	assert.False(t, dbTornDown, "the Teardown of the Setup that failed did not run")
	require.NotNil(t, rep.Baseline)
	assert.True(t, rep.Baseline.Inconclusive)
	assert.Equal(t, "setup: db down", rep.Baseline.Error)
	assert.Empty(t, rep.Results, "no scenario ran after the baseline's Setup failed")
}
