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

// A heartbeat the agent never stops repeats one idempotent put on a
// ticker, as often as the run takes: a fault planned on its second tick
// did not fire in runs that ticked once, and the correct agent was
// inconclusive in 1 to 3 runs of 10 (red team rX). Its faults are planned
// on the first tick only, and the report says why; the agent's own
// charges, each with its own arguments, keep theirs.
func TestAHeartbeatsTicksAreOneCallsFaults(t *testing.T) {
	put := &Op{Name: "put", Kind: KindWrite, Params: []string{"key"}, Idempotent: true}
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"id"}}
	var mu sync.Mutex
	var charged map[string]int
	agent := func(ctx context.Context) error {
		go func() {
			tick := time.NewTicker(2 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-tick.C:
					traced(ctx, put, []any{"hb"}, []any{"hb"}, func(context.Context) error { return nil })
				case <-ctx.Done():
					return
				}
			}
		}()
		for _, id := range []string{"a1", "a2"} {
			call := func() error {
				return traced(ctx, charge, []any{id}, []any{id}, func(context.Context) error {
					time.Sleep(5 * time.Millisecond)
					mu.Lock()
					charged[id] = 1 // keyed
					mu.Unlock()
					return nil
				})
			}
			if err := call(); err != nil {
				if err := call(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	opts := []Option{
		Setup(func(context.Context) error { mu.Lock(); charged = map[string]int{}; mu.Unlock(); return nil }),
		State(func() any {
			mu.Lock()
			defer mu.Unlock()
			return map[string]int{"a1": charged["a1"], "a2": charged["a2"]}
		}),
	}
	for range 5 {
		rep, err := Run(context.Background(), t.Name(), agent, opts...)
		require.NoError(t, err)
		ticks := 0
		for _, o := range rep.Baseline.Trace.Ops {
			if o.Name == "put" {
				ticks++
			}
		}
		planned := map[string]bool{}
		for _, r := range rep.Results {
			planned[r.Scenario] = true
			for _, f := range r.Findings {
				// The heartbeat outlives the invocation until its
				// context ends, and a tick may come after a run ended
				// (goroutine_leak, a warning): no error.
				assert.NotEqual(t, SeverityError, f.Severity, "%s: %s", r.Scenario, f.Message)
				assert.NotEqual(t, CodeFaultNotTriggered, f.Code, "%s: %s", r.Scenario, f.Message)
			}
			assert.NotContains(t, r.Scenario, "put#2", "a fault on the heartbeat's second tick")
		}
		for _, sc := range []string{"lost_acknowledgement/charge#1", "crash_restart/charge#2", "lost_acknowledgement/put#1"} {
			assert.True(t, planned[sc], "%s not planned", sc)
		}
		if ticks > 1 {
			assert.True(t, strings.Contains(strings.Join(rep.Notes, "\n"), "no fault was planned on put#2"), "no note on the ticks left out: %q", rep.Notes)
			_, err := Run(context.Background(), t.Name(), agent, append(opts, OnlyScenario("lost_acknowledgement/put#2"))...)
			var cfg *ConfigError
			if assert.True(t, errors.As(err, &cfg), "OnlyScenario of a tick left out: %v", err) {
				// Its own baseline may have ticked once: then no
				// put#2 at all.
				assert.Contains(t, cfg.Want, "names no scenario of this suite")
			}
		}
	}
}

// A write that failed by itself in the baseline and was retried at the
// same site with the same arguments is a retry, not a tick: the retry's
// success keeps its lost acknowledgement and crash, which its first call,
// failed, cannot have (failedInBaseline).
func TestARetryAfterAFailureKeepsItsFaults(t *testing.T) {
	attach := &Op{Name: "attach", Kind: KindWrite, Params: []string{"id"}}
	var mu sync.Mutex
	var tries int
	agent := func(ctx context.Context) error {
		var err error
		for range 2 {
			if err = traced(ctx, attach, []any{"i1"}, []any{"i1"}, func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				tries++
				if tries == 1 {
					return errors.New("404: no such invoice yet")
				}
				return nil
			}); err == nil {
				return nil
			}
		}
		return err
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error { mu.Lock(); tries = 0; mu.Unlock(); return nil }))
	require.NoError(t, err)
	planned := map[string]bool{}
	for _, r := range rep.Results {
		planned[r.Scenario] = true
	}
	for _, sc := range []string{"lost_acknowledgement/attach#2", "crash_restart/attach#2"} {
		assert.True(t, planned[sc], "%s not planned: %v", sc, planned)
	}
}

// A tick in flight beside one of the agent's writes is in a batch with it,
// and the partial batch failures were planned on it as on the agent's own
// calls: a fault on the second tick, where runs tick as the clock says
// (CI231: partial_batch_failure/put#2 in TestAHeartbeatsTicksAreOneCallsFaults
// under load). It gets none, as it gets no other fault: put#1's stand
// for it. Here the second tick waits for a charge to begin, so that it
// is in a batch on every run.
func TestATickBesideAWriteHasNoPartialBatchOfItsOwn(t *testing.T) {
	put := &Op{Name: "put", Kind: KindWrite, Params: []string{"key"}, Idempotent: true}
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"id"}}
	var mu sync.Mutex
	var charged map[string]int
	agent := func(ctx context.Context) error {
		began := make(chan struct{}, 1)
		go func() {
			for k := range 2 {
				traced(ctx, put, []any{"hb"}, []any{"hb"}, func(context.Context) error { time.Sleep(5 * time.Millisecond); return nil })
				if k == 0 {
					select {
					case <-began:
					case <-ctx.Done():
						return
					}
				}
			}
		}()
		time.Sleep(time.Millisecond)
		for _, id := range []string{"a1", "a2"} {
			if err := traced(ctx, charge, []any{id}, []any{id}, func(context.Context) error {
				select {
				case began <- struct{}{}:
				default:
				}
				time.Sleep(10 * time.Millisecond)
				mu.Lock()
				charged[id] = 1
				mu.Unlock()
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error { mu.Lock(); charged = map[string]int{}; mu.Unlock(); return nil }),
		State(func() any {
			mu.Lock()
			defer mu.Unlock()
			return map[string]int{"a1": charged["a1"], "a2": charged["a2"]}
		}))
	require.NoError(t, err)
	planned := map[string]bool{}
	for _, r := range rep.Results {
		planned[r.Scenario] = true
		assert.NotContains(t, r.Scenario, "put#2", "a fault on the second tick")
		for _, f := range r.Findings {
			assert.NotEqual(t, SeverityError, f.Severity, "%s: %s", r.Scenario, f.Message)
		}
	}
	for _, sc := range []string{"partial_batch_failure/put#1", "lost_acknowledgement/put#1"} {
		assert.True(t, planned[sc], "%s not planned: %v", sc, planned)
	}
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "no fault was planned on put#2")
}
