package runtime

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// lateServer books charges the way a payment API does once its client gave
// up: later, when it gets to it. Its bookings in flight land when the world
// is let settle (Settle), never while the tool that sent them runs. They
// land on the goroutine that settles: a WaitGroup of landing goroutines
// raced its Wait in one delivery with its Add in another (a data race
// under -race in the concurrent deliveries).
type lateServer struct {
	w       *kvWorld
	mu      sync.Mutex
	pending []func()
}

func (s *lateServer) book() {
	s.w.do(func(m map[string]any) {
		l, _ := m["charges"].([]any)
		m["charges"] = append(l, "o1")
	})
}

// later has f land once the world settles.
func (s *lateServer) later(f func()) {
	s.mu.Lock()
	s.pending = append(s.pending, f)
	s.mu.Unlock()
}

// bookLater books once the world settles.
func (s *lateServer) bookLater() { s.later(s.book) }

func (s *lateServer) settle(context.Context) error {
	s.mu.Lock()
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, f := range pending {
		f()
	}
	return nil
}

// A payment API that books a charge after its client gave up: the agent's
// first charge times out, the booking lands after the call returned, and
// the agent charges again. Settle lets the booking land before the retry,
// so the retry's snapshot before holds it: the world was charged twice for
// one order, in the baseline too. On eac14d2 the failed call's window
// closed before its booking landed, and the booking fell between windows,
// where no call owned it: the baseline passed. (With a real HTTP server,
// whose booking raced the client's return, the same baseline was a
// duplicate_write about half of the time: the verdict changed from run to
// run.)
func TestChargeBookedAfterTheClientGaveUpIsADuplicate(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	w := &kvWorld{}
	srv := &lateServer{w: w}
	agent := func(ctx context.Context) error {
		first := true
		call := func() error {
			return traced(ctx, charge, []any{"o1"}, []any{"o1"}, func(context.Context) error {
				if first {
					first = false
					srv.bookLater()
					return errors.New("context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
				}
				srv.book()
				return nil
			})
		}
		var err error
		for range 3 {
			if err = call(); err == nil {
				return nil
			}
		}
		return err
	}
	rep := runOn(t, w, nil, agent, Settle(srv.settle))
	if got := findings(rep, ScenarioBaseline); !slices.Contains(got, CodeDuplicateWrite+" charge") {
		t.Fatalf("baseline findings %v, want the duplicate charge", got)
	}
}

// The agent places an order, which a worker books later (it lands when the
// world settles), then charges it: the charge times out having done
// nothing, and its retry charges and counts the order paid. Both the
// booking and the retry change the count of the shop's events. What lands
// before the retry is not the failed charge's alone: the order's booking
// was on its way too. The charge ran once; no duplicate. Taking the whole
// gap for the failed call's (887a826 as first written) made the booking
// its effect, in a place the retry changes too: a false duplicate_write
// of charge.
func TestLateEffectOfAnotherWriteIsNotTheFailedCalls(t *testing.T) {
	place := &Op{Name: "place", Kind: KindWrite, Params: []string{"order"}}
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	w := &kvWorld{}
	srv := &lateServer{w: w}
	bump := func(m map[string]any) { m["events"] = num(m["events"]) + 1 }
	agent := func(ctx context.Context) error {
		if err := traced(ctx, place, []any{"o1"}, []any{"o1"}, func(context.Context) error {
			srv.later(func() { w.do(func(m map[string]any) { m["o1"] = "booked"; bump(m) }) })
			return nil
		}); err != nil {
			return err
		}
		first := true
		var err error
		for range 3 {
			err = traced(ctx, charge, []any{"o1"}, []any{"o1"}, func(context.Context) error {
				if first {
					first = false
					return errors.New("context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
				}
				return w.do(func(m map[string]any) { m["paid"] = "o1"; bump(m) })
			})
			if err == nil {
				return nil
			}
		}
		return err
	}
	rep := runOn(t, w, nil, agent, Settle(srv.settle))
	if got := findings(rep, ScenarioBaseline); slices.Contains(got, CodeDuplicateWrite+" charge") {
		t.Fatalf("baseline findings %v: the charge ran once", got)
	}
}
