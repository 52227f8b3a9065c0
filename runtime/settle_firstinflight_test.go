package runtime

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// shipWorld is an outbox drained by a worker, as in idem/sqlite's outbox
// test: ship queues a shipment for an order unless one is queued (keyed)
// or always (naive); the worker takes one of its sku from the stock
// later, when the world settles (lateServer). State is the stock alone.
//
// hold makes the first execution of ship o2 in a concurrent delivery
// commit while its repeat, in the other delivery, waits for the world to
// settle before it runs: the repeat's Settle starts, then the first
// execution queues its shipment and returns, and only once the judge has
// closed the first's window does that Settle return. This is what a slow
// first execution (a SQLite busy wait of 20 ms) does under load.
type shipWorld struct {
	w        *kvWorld
	srv      *lateServer
	keyed    bool
	running  atomic.Int32 // deliveries in flight
	mu       sync.Mutex
	settling chan struct{} // closed when the repeat's Settle started
	returned bool          // the held first execution returned
	closed   chan struct{} // closed when a snapshot was taken after it returned
	holds    int           // first executions held
	// missed says the repeat's Settle had run before the hold began:
	// the judge took the other delivery's call for the first execution
	// (it reached the judge first, and the world second). The run is
	// not the one the test is about, and is done again.
	missed bool
}

func (s *shipWorld) reset() {
	s.mu.Lock()
	s.settling, s.closed, s.returned = nil, nil, false
	s.mu.Unlock()
}

func (s *shipWorld) ship(ctx context.Context, ref, sku string) error {
	op := &Op{Name: "ship", Kind: KindWrite, Params: []string{"ref", "sku"}}
	return traced(ctx, op, []any{ref, sku}, []any{ref}, func(context.Context) error {
		first := false
		s.w.do(func(m map[string]any) {
			q, _ := m["queued"].(map[string]any)
			if q[ref] == nil || !s.keyed {
				q[ref] = true
				first = true
			}
		})
		if !first {
			return nil
		}
		if ref == "o2" && s.running.Load() == 2 {
			s.mu.Lock()
			if s.settling == nil {
				s.settling, s.closed = make(chan struct{}), make(chan struct{})
				s.holds++
				settling := s.settling
				s.mu.Unlock()
				select {
				case <-settling:
				case <-time.After(time.Second):
					s.mu.Lock()
					s.missed = true
					s.mu.Unlock()
				}
				defer func() { s.mu.Lock(); s.returned = true; s.mu.Unlock() }()
			} else {
				s.mu.Unlock()
			}
		}
		s.srv.later(func() {
			s.w.do(func(m map[string]any) { m[sku] = num(m[sku]) - 1 })
		})
		return nil
	})
}

func (s *shipWorld) settle(ctx context.Context) error {
	err := s.srv.settle(ctx)
	s.mu.Lock()
	settling, closed, missed := s.settling, s.closed, s.missed
	s.mu.Unlock()
	if settling == nil || missed {
		return err
	}
	select {
	case <-settling:
		return err // the held first execution went on already
	default:
	}
	close(settling)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
	}
	return err
}

func (s *shipWorld) state() any {
	s.mu.Lock()
	if s.returned && s.closed != nil {
		select {
		case <-s.closed:
		default:
			close(s.closed)
		}
	}
	s.mu.Unlock()
	v := s.w.snapshot().(map[string]any)
	return map[string]any{"a": v["a"], "b": v["b"]}
}

// runShip runs the agent until the hold happened as shipWorld says, and
// gives every run to check, which holds for any interleaving. The
// goroutines decide which delivery's call reaches the judge first and
// which the world first, and whether the repeat's window opens before the
// first execution's closes: when the first differ (missed) or the repeat
// overlapped the first execution (its cluster is judged by the end), the
// run is not the one the tests are about, and is done again.
func runShip(t *testing.T, keyed bool, check func(*Report)) (*Report, *shipWorld) {
	t.Helper()
	for range 20 {
		rep, s := runShipOnce(t, keyed)
		check(rep)
		if !s.missed && !repeatOverlapped(rep, `"o2"`) {
			return rep, s
		}
	}
	t.Fatal("in 20 runs, the repeat's Settle never ran alone while the first execution of ship o2 was held")
	return nil, nil
}

// repeatOverlapped reports whether a repeat of identity id ran while
// another write was in flight.
func repeatOverlapped(rep *Report, id string) bool {
	for _, r := range rep.Results {
		for _, o := range r.Trace.Ops {
			if o.Identity == id && o.Repeat != "" && o.Overlapped {
				return true
			}
		}
	}
	return false
}

func runShipOnce(t *testing.T, keyed bool) (*Report, *shipWorld) {
	t.Helper()
	w := &kvWorld{}
	s := &shipWorld{w: w, srv: &lateServer{w: w}, keyed: keyed}
	agent := func(ctx context.Context) error {
		s.running.Add(1)
		defer s.running.Add(-1)
		for i, sku := range []string{"a", "b"} {
			ref := []string{"o1", "o2"}[i]
			if err := s.ship(ctx, ref, sku); err != nil {
				if err := s.ship(ctx, ref, sku); err != nil {
					return err
				}
			}
		}
		return nil
	}
	rep := runOn(t, w, func(m map[string]any) {
		m["a"], m["b"], m["queued"] = 10, 10, map[string]any{}
		s.srv.mu.Lock()
		s.srv.pending = nil
		s.srv.mu.Unlock()
		s.reset()
	}, agent, State(s.state), Settle(s.settle), OnlyScenario(ScenarioDuplicateConcurrent), StallTimeout(10*time.Second))
	return rep, s
}

// The keyed shipment's repeat changes nothing; the worker's decrement for
// the first execution, which committed while the repeat's Settle ran, lands
// in the repeat's window. The repeat is no duplicate.
func TestFirstExecutionReturnedDuringTheRepeatsSettleIsNotTheRepeats(t *testing.T) {
	rep, s := runShip(t, true, func(rep *Report) {
		t.Helper()
		if got := findings(rep, ScenarioDuplicateConcurrent); len(got) != 0 {
			var b strings.Builder
			for _, r := range rep.Results {
				for _, o := range r.Trace.Ops {
					b.WriteString("\n  " + o.ID + " ovl=" + boolStr(o.Overlapped) + " repeat=" + o.Repeat + " by=" + o.JudgedBy + " change=" + o.StateChange)
				}
			}
			for _, f := range rep.Findings {
				b.WriteString("\n  " + f.Message)
			}
			t.Fatalf("findings %v, want none:%s", got, b.String())
		}
	})
	if s.holds != 1 {
		t.Fatalf("the first execution of ship o2 was held %d times, want 1", s.holds)
	}
	// The shipment landed before the repeat's window opened: the repeat
	// changed nothing there, and is absorbed by its own snapshots.
	for _, r := range rep.Results {
		for _, o := range r.Trace.Ops {
			if o.Identity == `"o2"` && o.Repeat != "" && (o.Repeat != RepeatAbsorbed || o.JudgedBy != JudgedByState || o.StateChange != "") {
				t.Errorf("%s: repeat %s judged by %s, change %q; want absorbed by state, no change", o.ID, o.Repeat, o.JudgedBy, o.StateChange)
			}
		}
	}
}

// The naive shipment's repeat queues a second shipment: caught.
func TestFirstExecutionReturnedDuringTheRepeatsSettleNaiveIsCaught(t *testing.T) {
	_, s := runShip(t, false, func(rep *Report) {
		t.Helper()
		if got := findings(rep, ScenarioDuplicateConcurrent); !containsStr(got, CodeDuplicateWrite+" ship") {
			t.Fatalf("findings %v, want duplicate_write ship", got)
		}
	})
	if s.holds != 1 {
		t.Fatalf("the first execution of ship o2 was held %d times, want 1", s.holds)
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
