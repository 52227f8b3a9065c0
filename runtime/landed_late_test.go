package runtime

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// lateServer books the way a service with a worker does: later, when it
// gets to it. Its bookings in flight land when the world is let settle
// (Settle), never while the tool that sent them runs. They land on the
// goroutine that settles: a WaitGroup of landing goroutines raced its Wait
// in one delivery with its Add in another (a data race under -race in the
// concurrent deliveries).
type lateServer struct {
	w       *kvWorld
	mu      sync.Mutex
	pending []func()
}

// later has f land once the world settles.
func (s *lateServer) later(f func()) {
	s.mu.Lock()
	s.pending = append(s.pending, f)
	s.mu.Unlock()
}

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

// The agent places an order, which a worker books later (it lands when the
// world settles), then charges it: the charge times out having done
// nothing, and its retry charges and counts the order paid. Both the
// booking and the retry change the count of the shop's events. What lands
// before the retry is not the failed charge's: the order's booking was on
// its way. The charge ran once; no duplicate. Taking the gap before a
// failed call's retry for the failed call's (420dfbd, reverted) made the
// booking its effect, in a place the retry changes too: a false
// duplicate_write of charge.
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
