package runtime

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tool call from a time.AfterFunc callback still pending when a
// scenario ends is a limit the README states ("A timer still pending when
// its scenario ends"): a pending timer has no goroutine, and nothing in the
// standard library lists timers (runtime.Stack, runtime/metrics and
// runtime/pprof show none), so the harness cannot tell that one is there,
// and its call, made after the report, is told nowhere (red team rtN, F4:
// an agent that opens a ticket and sends a follow-up email from a timer,
// one per call, passed SAFE). This test pins both halves of what the
// README says. Without a wait the suite sees the open and never the
// follow-up: if it starts seeing it, the limit moved, and the README must
// say so. With a Settle that waits until no follow-up is pending (the
// README's advice), the follow-up lands while its scenario ends: a
// goroutine_leak warning names it and the scenario is inconclusive, never
// a plain pass.
func TestATimerPendingAtTheEndIsSeenOnlyWhenWaitedFor(t *testing.T) {
	open := &Op{Name: "open_ticket", Kind: KindWrite, Params: []string{"order"}}
	follow := &Op{Name: "follow_up", Kind: KindWrite, Params: []string{"order"}}
	var (
		mu              sync.Mutex
		opened          map[string]bool
		emails, pending int
		timers          []*time.Timer
	)
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, tm := range timers {
			tm.Stop()
		}
	})
	call := func(ctx context.Context, op *Op, fn func(context.Context)) error {
		c, cctx := Begin(ctx, op, []any{"o1"}, []any{"o1"}, nil)
		if err := c.Start(); err != nil {
			return err
		}
		fn(cctx)
		return c.Finish(nil)
	}
	agent := func(delay time.Duration) func(context.Context) error {
		return func(ctx context.Context) error {
			err := call(ctx, open, func(cctx context.Context) {
				mu.Lock()
				defer mu.Unlock()
				if opened["o1"] {
					MarkReplayed(cctx) // keyed: a repeat opens nothing
				}
				opened["o1"] = true
			})
			if err != nil {
				return err
			}
			fctx := context.WithoutCancel(ctx) // the run goes with it
			mu.Lock()
			defer mu.Unlock()
			pending++
			timers = append(timers, time.AfterFunc(delay, func() {
				call(fctx, follow, func(context.Context) { mu.Lock(); emails++; mu.Unlock() }) // one email per call: buggy
				mu.Lock()
				pending--
				mu.Unlock()
			}))
			return nil
		}
	}
	setup := Setup(func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		opened, emails, pending = map[string]bool{}, 0, 0
		return nil
	})
	seen := func(rep *Report) (follows int, leaks []*Result) {
		for _, res := range append([]*Result{rep.Baseline}, rep.Results...) {
			for _, o := range res.Trace.Ops {
				if o.Name == follow.Name {
					follows++
				}
			}
			if slices.ContainsFunc(res.Findings, func(f Finding) bool {
				return f.Code == CodeGoroutineLeak && slices.Contains(f.Ops, follow.Name)
			}) {
				leaks = append(leaks, res)
			}
		}
		return follows, leaks
	}

	// The timer is still pending when the suite reports: not seen.
	rep, err := Run(context.Background(), t.Name(), agent(time.Hour), setup)
	require.NoError(t, err)
	follows, leaks := seen(rep)
	assert.Zero(t, follows, "a follow-up from a pending timer was traced: the limit moved, update the README")
	assert.Empty(t, leaks)
	assert.True(t, rep.Safe, "the limit: nothing but the open was seen")

	// A Settle that waits for the pending follow-ups: seen, inconclusive.
	settle := Settle(func(context.Context) error {
		for range 1000 {
			mu.Lock()
			p := pending
			mu.Unlock()
			if p == 0 {
				return nil
			}
			time.Sleep(time.Millisecond)
		}
		return errors.New("a follow-up is still pending")
	})
	state := State(func() any { mu.Lock(); defer mu.Unlock(); return []any{opened["o1"], emails} })
	rep, err = Run(context.Background(), t.Name(), agent(5*time.Millisecond), setup, state, settle)
	require.NoError(t, err)
	_, leaks = seen(rep)
	require.NotEmpty(t, leaks, "the follow-up came while its scenario ended")
	for _, res := range leaks {
		assert.True(t, res.Inconclusive, "%s: not a plain pass", res.Scenario)
		assert.False(t, res.Safe, res.Scenario)
	}
	assert.True(t, rep.Baseline.Inconclusive || rep.InconclusiveCount > 0)
}
