package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/runtime/internal/waitclock"
)

// The agents of these tests call hookOp and, when it fails (the suite's
// lost_request), wait: for good on a channel nobody sends on (red team rtV
// #15: 10 s per scenario though nothing could wake it), or for a timer, or
// for a goroutine of the test's that sleeps first. Only the first is a
// deadlock.
var hookOp = &Op{Name: "refund_hook", Kind: KindWrite, Params: []string{"order"}}

func callHook(ctx context.Context) error {
	return traced(ctx, hookOp, []any{"o-5"}, []any{"o-5"}, func(context.Context) error { return nil })
}

// runHook runs the baseline and lost_request/refund_hook#1 of agent with a
// stall bound of 10 s, and returns that scenario's result.
func runHook(t *testing.T, agent func(ctx context.Context) error, opts ...Option) *Result {
	t.Helper()
	opts = append([]Option{StallTimeout(10 * time.Second), OnlyScenario("lost_request/refund_hook#1")}, opts...)
	rep, err := Run(context.Background(), t.Name(), agent, opts...)
	require.NoError(t, err)
	for _, res := range rep.Results {
		if res.Scenario == "lost_request/refund_hook#1" {
			return res
		}
	}
	t.Fatalf("no lost_request/refund_hook#1 in %d results", len(rep.Results))
	return nil
}

func stallOf(res *Result) string {
	for _, f := range res.Findings {
		if f.Code == CodeStalled {
			return f.Message
		}
	}
	return ""
}

// blockForGood waits, after the hook's error, on a channel nobody sends on
// while the suite runs (the test closes it after, for goleak).
func blockForGood(never chan struct{}) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if err := callHook(ctx); err != nil {
			<-never // a webhook that never comes
			return errors.New("unreachable")
		}
		return nil
	}
}

// A proven deadlock is decided in about a second, not the 10 s bound; the
// agent, left running, is said not to have returned.
func TestProvenDeadlockStallsBeforeTheBound(t *testing.T) {
	never := make(chan struct{})
	defer close(never)
	start := time.Now()
	res := runHook(t, blockForGood(never))
	took := time.Since(start)
	msg := stallOf(res)
	t.Log(msg)
	require.NotEmpty(t, msg, "the scenario stalled")
	assert.Less(t, took, 6*time.Second, "decided well before the 10 s bound")
	assert.Contains(t, msg, "is blocked on a channel receive at deadlock_test.go:")
	assert.Contains(t, msg, "decided after")
	assert.Contains(t, msg, "not the 10s of StallTimeout")
	assert.NotContains(t, msg, "no progress for 10s")
	assert.Equal(t, "left running", res.Returned(), "the agent never returned")
}

// waitTimer waits, after the hook's error, for a timer of 2.5 s: longer
// than a deadlock takes to be decided, far under the bound.
func waitTimer(ctx context.Context) error {
	if err := callHook(ctx); err != nil {
		<-time.After(2500 * time.Millisecond)
		return nil
	}
	return nil
}

// laterChan is a helper that hides the timer from its caller's code.
func laterChan(d time.Duration) <-chan time.Time { return time.After(d) }

// waitHelperTimer waits the same, through a helper: no timer word where
// the channel is received.
func waitHelperTimer(ctx context.Context) error {
	if err := callHook(ctx); err != nil {
		wake := laterChan(2500 * time.Millisecond)
		<-wake
		return nil
	}
	return nil
}

// A wait a timer ends is no deadlock, however plain the receive: the
// scenario waits for it, and no stall is reported.
func TestATimerWaitIsNoDeadlock(t *testing.T) {
	for name, agent := range map[string]func(context.Context) error{"direct": waitTimer, "helper": waitHelperTimer} {
		t.Run(name, func(t *testing.T) {
			res := runHook(t, agent)
			assert.Empty(t, stallOf(res), "a timer ends the wait")
			assert.Equal(t, "returned", res.Returned())
		})
	}
}

// A goroutine of the test's (started by Setup) that sleeps, then sends
// what the agent waits for: it may still wake the agent, and does.
func TestAWaitForASleepingSetupGoroutineIsNoDeadlock(t *testing.T) {
	var hook chan struct{}
	agent := func(ctx context.Context) error {
		if err := callHook(ctx); err != nil {
			<-hook
		}
		return nil
	}
	res := runHook(t, agent, Setup(func(context.Context) error {
		hook = make(chan struct{})
		h := hook
		go func() {
			time.Sleep(2500 * time.Millisecond)
			close(h)
		}()
		return nil
	}))
	assert.Empty(t, stallOf(res), "the Setup goroutine's send ends the wait")
}

// A worker of the agent's own that sleeps before it answers is busy, not
// deadlocked, though the agent waits on a plain receive.
func TestAWaitForASleepingWorkerIsNoDeadlock(t *testing.T) {
	agent := func(ctx context.Context) error {
		if err := callHook(ctx); err != nil {
			done := make(chan struct{})
			go func() {
				time.Sleep(2500 * time.Millisecond)
				close(done)
			}()
			<-done
		}
		return nil
	}
	res := runHook(t, agent)
	assert.Empty(t, stallOf(res))
}

func TestFuncTextAndCallees(t *testing.T) {
	assert.Equal(t, "laterChan", funcName("func laterChan(d time.Duration) <-chan time.Time { return time.After(d) }"))
	assert.Equal(t, "gone", funcName("func (cw *crashWatch) gone(r *recorder, inv *invocation, self uint64) bool {"))
	assert.True(t, timerWords("x := t.C\n"))
	assert.False(t, timerWords("x := t.Calls\n<-ch"))
	assert.Equal(t, []string{"laterChan", "Sleep"}, calledNames("wake := laterChan(2); time.Sleep(1)"))
	assert.True(t, strings.Contains(pkgFuncs(".")["laterChan"][0].text, "time.After"))
}

// waitPackageClock waits the same through a helper of another package of
// the module (waitclock.Wait: time.AfterFunc closes the channel): the
// correct agent of red team rtW #5, which honoured a 429's Retry-After
// with <-clock.Wait(2s) and was called deadlocked after 1.3 s.
func waitPackageClock(ctx context.Context) error {
	if err := callHook(ctx); err != nil {
		<-waitclock.Wait(2500 * time.Millisecond)
		return nil
	}
	return nil
}

// A wait a timer ends through a helper package of the module is no
// deadlock: the package is read through the file's imports.
func TestATimerOfAnotherPackageOfTheModuleIsNoDeadlock(t *testing.T) {
	start := time.Now()
	res := runHook(t, waitPackageClock)
	assert.Empty(t, stallOf(res), "the helper package's timer ends the wait")
	assert.Equal(t, "returned", res.Returned())
	assert.GreaterOrEqual(t, time.Since(start), 2500*time.Millisecond)
}

// blockOnPackageHook waits, after the hook's error, on a channel that a
// helper package hands back, which nobody closes while the suite runs.
func blockOnPackageHook(never chan struct{}) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if err := callHook(ctx); err != nil {
			<-waitclock.Hook(never)
			return errors.New("unreachable")
		}
		return nil
	}
}

// The helper package is read, not only trusted: where its code sets no
// timer, the wait is still proven a deadlock before the bound.
func TestAWaitOnAnotherPackagesChannelIsStillProven(t *testing.T) {
	never := make(chan struct{})
	defer close(never)
	start := time.Now()
	res := runHook(t, blockOnPackageHook(never))
	msg := stallOf(res)
	require.NotEmpty(t, msg, "the scenario stalled")
	assert.Contains(t, msg, "decided after")
	assert.Less(t, time.Since(start), 6*time.Second, "decided well before the 10 s bound")
}
