package testkit_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"golang.org/x/sync/errgroup"
)

// slowStore holds its lock across a sleep in every write, as a store that
// writes to a slow disk under its lock does.
type slowStore struct {
	mu       sync.Mutex
	charges  map[string]int
	keys     map[string]bool
	invoices map[string]bool
	attached map[string]bool
	rows     []string
}

func newSlowStore() *slowStore {
	return &slowStore{charges: map[string]int{}, keys: map[string]bool{}, invoices: map[string]bool{}, attached: map[string]bool{}}
}

var (
	slowChargeOp = &runtime.Op{Name: "slow_charge", Kind: runtime.KindWrite, Params: []string{"order", "key"}}
	slowCreateOp = &runtime.Op{Name: "slow_create_invoice", Kind: runtime.KindWrite, Params: []string{"invoice"}}
	slowAttachOp = &runtime.Op{Name: "slow_attach_invoice", Kind: runtime.KindWrite, Params: []string{"invoice"}, After: []string{"slow_create_invoice"}}
	slowRowOp    = &runtime.Op{Name: "slow_insert_row", Kind: runtime.KindWrite, Params: []string{"key"}}
)

// charge pays order once per call, or once per key when key is set.
func (s *slowStore) charge(ctx context.Context, order, key string) error {
	return tracedCall(ctx, slowChargeOp, []any{order, key}, []any{order}, nil, func(context.Context) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		time.Sleep(5 * time.Millisecond) // the disk write, under the lock
		if key != "" && s.keys[key] {
			return nil
		}
		s.keys[key] = key != ""
		s.charges[order]++
		return nil
	})
}

func (s *slowStore) create(ctx context.Context, inv string) error {
	return tracedCall(ctx, slowCreateOp, []any{inv}, []any{inv}, nil, func(context.Context) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		s.invoices[inv] = true
		return nil
	})
}

func (s *slowStore) attach(ctx context.Context, inv string) error {
	return tracedCall(ctx, slowAttachOp, []any{inv}, []any{inv}, nil, func(context.Context) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		if !s.invoices[inv] {
			return errors.New("attach " + inv + ": no such invoice")
		}
		s.attached[inv] = true
		return nil
	})
}

// insertRow checks for the row, then inserts it a sleep later, with the
// lock let go meanwhile (racy), or under the lock throughout.
func (s *slowStore) insertRow(ctx context.Context, key string, racy bool) error {
	return tracedCall(ctx, slowRowOp, []any{key}, []any{key}, nil, func(context.Context) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		exists := slices.Contains(s.rows, key)
		if racy {
			s.mu.Unlock()
		}
		time.Sleep(2 * time.Millisecond) // the INSERT's round trip
		if racy {
			s.mu.Lock()
		}
		if !exists {
			s.rows = append(s.rows, key)
		}
		return nil
	})
}

func (s *slowStore) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"charges": s.charges, "invoices": s.invoices, "attached": s.attached, "rows": slices.Sorted(slices.Values(s.rows))}
}

// TestLockHeldAcrossASleepInAToolRunsInVirtualTime: an agent whose tool
// holds a sync.Mutex across a time.Sleep, called in parallel, under
// VirtualTime. The sleep is a durable block, so the bubble took the agent
// for quiet and let the second call start, which then waited on the lock:
// no durable block, so the bubble's clock stopped, the sleep never ended,
// and the watchdog ended the test binary (a red team's agent, /tmp/rt24/vt;
// on real time it passed with right verdicts). Now a tool body asleep in a
// bubble holds the next start back while the clock runs, as on real time;
// the verdicts are real time's, and a buggy twin is still caught. The
// suites run in a child process, so that a stall fails this test (at the
// child's -test.timeout) instead of hanging it.
func TestLockHeldAcrossASleepInAToolRunsInVirtualTime(t *testing.T) {
	if !inChild(t) {
		return
	}
	var s *slowStore
	opts := func(extra ...testkit.Option) []testkit.Option {
		return append([]testkit.Option{
			testkit.NoSummary(), testkit.VirtualTime(), testkit.StallTimeout(2 * time.Second),
			testkit.Setup(func(context.Context) error { s = newSlowStore(); return nil }),
			testkit.State(func() any { return s.snapshot() }),
		}, extra...)
	}
	charges := func(keyed bool) func(context.Context) error {
		return func(ctx context.Context) error {
			g, gctx := errgroup.WithContext(ctx)
			for _, o := range []string{"o1", "o2"} {
				g.Go(func() error {
					key := ""
					if keyed {
						key = "k:" + o
					}
					var err error
					for range 2 { // a retry on a lost answer
						if err = s.charge(gctx, o, key); err == nil || gctx.Err() != nil {
							return err
						}
						time.Sleep(5 * time.Millisecond)
					}
					return err
				})
			}
			return g.Wait()
		}
	}
	// clocks checks that the scenarios ran in the bubble, but for the
	// concurrent delivery, run on real time with a note saying why, and
	// the fault scenarios, run on real time (a fault may leave the agent's
	// goroutines blocked for good, which a bubble cannot end with).
	clocks := func(t *testing.T, rep *runtime.Report) {
		t.Helper()
		for _, res := range rep.Results {
			if res.Fault != nil {
				assert.Equal(t, runtime.ClockReal, res.Clock, res.Scenario)
				continue
			}
			if res.Scenario == runtime.ScenarioDuplicateConcurrent {
				assert.Equal(t, runtime.ClockReal, res.Clock, res.Scenario)
				assert.True(t, slices.ContainsFunc(res.Trace.Notes, func(n string) bool {
					return strings.Contains(n, "this scenario ran on real time: a tool body slept")
				}), "%s: %v", res.Scenario, res.Trace.Notes)
				continue
			}
			assert.Equal(t, runtime.ClockVirtual, res.Clock, res.Scenario)
		}
	}

	t.Run("keyed charges pass", func(t *testing.T) {
		rep := testkit.Run(t, charges(true), opts()...)
		assert.True(t, rep.Safe && rep.InconclusiveCount == 0, "%v", rep.Findings)
		clocks(t, rep)
	})
	t.Run("a retry that charges again is caught", func(t *testing.T) {
		rep := testkit.Run(t, charges(false), opts()...)
		assert.False(t, rep.Safe)
		for _, sc := range []string{"lost_acknowledgement/slow_charge#1", runtime.ScenarioDuplicateConcurrent} {
			assert.True(t, slices.ContainsFunc(rep.Findings, func(f runtime.Finding) bool {
				return f.Code == runtime.CodeDuplicateWrite && f.Scenario == sc
			}), "no duplicate_write in %s: %v", sc, rep.Findings)
		}
		clocks(t, rep)
	})
	t.Run("an attach dispatched with its create is caught", func(t *testing.T) {
		for _, parallel := range []bool{true, false} {
			agent := func(ctx context.Context) error {
				if !parallel {
					return errors.Join(s.create(ctx, "INV-1"), s.attach(ctx, "INV-1"))
				}
				g, gctx := errgroup.WithContext(ctx)
				g.Go(func() error { return s.create(gctx, "INV-1") })
				g.Go(func() error { return s.attach(gctx, "INV-1") })
				return g.Wait()
			}
			rep := testkit.Run(t, agent, opts()...)
			assert.Equal(t, parallel, rep.Has(runtime.CodeDependentCallsConcurrent), "parallel=%v: %v", parallel, rep.Findings)
			if !parallel {
				assert.True(t, rep.Safe, "%v", rep.Findings)
			}
		}
	})
	// The same call of both deliveries still runs at once where the
	// bodies can overlap (on real time): a check, a sleep and an insert
	// race there, and the insert under the lock passes.
	t.Run("a race between two deliveries' bodies is still caught", func(t *testing.T) {
		for _, racy := range []bool{true, false} {
			agent := func(ctx context.Context) error {
				g, gctx := errgroup.WithContext(ctx)
				for _, key := range []string{"k0", "k1"} {
					g.Go(func() error { return s.insertRow(gctx, key, racy) })
				}
				return g.Wait()
			}
			rep := testkit.Run(t, agent, opts()...)
			caught := slices.ContainsFunc(rep.Findings, func(f runtime.Finding) bool {
				return f.Code == runtime.CodeDuplicateWrite && f.Scenario == runtime.ScenarioDuplicateConcurrent
			})
			assert.Equal(t, racy, caught, "racy=%v: %v", racy, rep.Findings)
			if !racy {
				assert.True(t, rep.Safe && rep.InconclusiveCount == 0, "%v", rep.Findings)
			}
		}
	})
}
