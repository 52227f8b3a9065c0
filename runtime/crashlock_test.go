package runtime

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A red team's agent (rtK, mutexcrash) holds a mutex of its own across a
// retry loop of one idempotent write and unlocks it without defer. The
// crash scenario ends the crashed delivery's goroutine at its retry
// (runtime.Goexit), the mutex stays locked, and the restart blocked on it
// for good: a stall, an error, told to raise the stall bound. A real crash
// ends the process and the lock with it: the suite, not the agent, left it
// held. The scenario is inconclusive now, saying so; with the unlock
// deferred the agent passes; and a stall on a lock the agent leaks by
// itself, with no crash, stays an error.

var opChargeOrder = &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}, Idempotent: true, Pos: "crashlock_test.go:1"}

type shop struct {
	mu      sync.Mutex
	charges map[string]int
}

func (s *shop) charge(ctx context.Context, order string) error {
	return traced(ctx, opChargeOrder, []any{order}, []any{order}, func(context.Context) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.charges[order] = 1 // a set: a repeat changes nothing
		return nil
	})
}

func (s *shop) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int{}
	for k, v := range s.charges {
		m[k] = v
	}
	return m
}

type lockedAgent struct {
	mu   sync.Mutex
	shop *shop
}

// runRetry is the red team's: the lock held across the retries, unlocked
// without defer.
func (a *lockedAgent) runRetry(ctx context.Context) error {
	a.mu.Lock()
	var err error
	for range 3 {
		if err = a.shop.charge(ctx, "o-1"); err == nil {
			break
		}
	}
	a.mu.Unlock()
	return err
}

// runRetryDefer is runRetry with the unlock deferred.
func (a *lockedAgent) runRetryDefer(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	for range 3 {
		if err = a.shop.charge(ctx, "o-1"); err == nil {
			break
		}
	}
	return err
}

// runLeaky forgets to unlock when the charge succeeds: its next delivery
// blocks on the lock for good, in production too (a true stall).
func (a *lockedAgent) runLeaky(ctx context.Context) error {
	a.mu.Lock()
	if err := a.shop.charge(ctx, "o-1"); err != nil {
		a.mu.Unlock()
		return err
	}
	return nil
}

// runErrLeak forgets to unlock when the charge fails: the crashed
// delivery sees the crash's error and returns holding the lock, which no
// Goexit of the suite's left held; any error does the same in production,
// and the next delivery blocks for good.
func (a *lockedAgent) runErrLeak(ctx context.Context) error {
	a.mu.Lock()
	if err := a.shop.charge(ctx, "o-1"); err != nil {
		return err
	}
	a.mu.Unlock()
	return nil
}

func runLocked(t *testing.T, run func(*lockedAgent, context.Context) error, only string) *Report {
	t.Helper()
	// Atomic: a delivery a stall left running read it while the next
	// scenario's Setup set it (-race).
	var a atomic.Pointer[lockedAgent]
	var all []*lockedAgent
	defer func() {
		// Free the deliveries left blocked on a lock (goleak): each
		// then finds its context cancelled, or its run ended.
		for _, a := range all {
			if !a.mu.TryLock() {
				a.mu.Unlock()
			} else {
				a.mu.Unlock()
			}
		}
	}()
	opts := []Option{
		Setup(func(context.Context) error {
			a.Store(&lockedAgent{shop: &shop{charges: map[string]int{}}})
			all = append(all, a.Load())
			return nil
		}),
		State(func() any { return a.Load().shop.snapshot() }),
		StallTimeout(500 * time.Millisecond),
	}
	if only != "" {
		opts = append(opts, OnlyScenario(only))
	}
	rep, err := Run(context.Background(), "locked", func(ctx context.Context) error { return run(a.Load(), ctx) }, opts...)
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded, "baseline: %s", rep.BaselineFailure)
	return rep
}

func resultOf(t *testing.T, rep *Report, scenario string) *Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Scenario == scenario {
			return r
		}
	}
	t.Fatalf("no scenario %s", scenario)
	return nil
}

func TestCrashLeavesAMutexHeldInconclusive(t *testing.T) {
	for range 2 {
		rep := runLocked(t, (*lockedAgent).runRetry, "")
		r := resultOf(t, rep, "crash_restart/charge#1")
		assert.True(t, r.Inconclusive, "the restart could not be tested")
		assert.False(t, r.Safe)
		assert.Empty(t, resultCodes(r), "no stalled error: the suite left the lock held")
		notes := strings.Join(r.Trace.Notes, "\n")
		assert.Contains(t, notes, "the restart could not be tested: delivery 2 (goroutine ")
		assert.Contains(t, notes, "is blocked on a sync.Mutex at crashlock_test.go:")
		assert.Contains(t, notes, "in runtime.(*lockedAgent).runRetry, and the suite had ended goroutine ")
		assert.Contains(t, notes, "a real crash ends the process, and the lock with it")
		assert.Contains(t, notes, "unlock with defer")
		for _, o := range rep.Results {
			if o != r {
				assert.True(t, o.Safe, "%s: %v %v", o.Scenario, o.Findings, o.Trace.Notes)
			}
		}
	}
}

func TestCrashWithDeferredUnlockPasses(t *testing.T) {
	for range 3 {
		rep := runLocked(t, (*lockedAgent).runRetryDefer, "")
		for _, r := range rep.Results {
			assert.True(t, r.Safe, "%s: %v %v", r.Scenario, r.Findings, r.Trace.Notes)
		}
		assert.True(t, rep.Safe)
	}
}

// The true stall: the agent leaks its lock, no crash is played, and the
// second delivery blocks on it for good. It stays a stalled error, which
// no longer advises a longer stall bound, which could not help.
func TestLeakedMutexStallStaysAnError(t *testing.T) {
	rep := runLocked(t, (*lockedAgent).runLeaky, ScenarioDuplicateSeq)
	r := resultOf(t, rep, ScenarioDuplicateSeq)
	require.Equal(t, []string{CodeStalled}, resultCodes(r), "%v", r.Trace.Notes)
	assert.False(t, r.Safe)
	msg := r.Findings[0].Message
	assert.Contains(t, msg, "delivery 2 (goroutine ")
	assert.Contains(t, msg, "is blocked on a sync.Mutex at crashlock_test.go:")
	assert.Contains(t, msg, "so a longer StallTimeout helps only if a goroutine outside the scenario ends that wait")
	assert.NotContains(t, msg, "if the agent is only slow")
	assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "could not be tested")
}

// The crash scenario of an agent that returns holding its lock: the suite
// ended none of its goroutines, and the stall stays an error.
func TestErrorPathLeakedMutexStallStaysAnError(t *testing.T) {
	rep := runLocked(t, (*lockedAgent).runErrLeak, "crash_restart/charge#1")
	r := resultOf(t, rep, "crash_restart/charge#1")
	require.Equal(t, []string{CodeStalled}, resultCodes(r), "%v", r.Trace.Notes)
	assert.False(t, r.Safe)
	assert.Contains(t, r.Findings[0].Message, "is blocked on a sync.Mutex at crashlock_test.go:")
	assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "could not be tested")
}
