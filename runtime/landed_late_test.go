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
// is let settle (Settle), never while the tool that sent them runs.
type lateServer struct {
	w       *kvWorld
	mu      sync.Mutex
	pending []chan struct{}
	landing sync.WaitGroup
}

func (s *lateServer) book() {
	s.w.do(func(m map[string]any) {
		l, _ := m["charges"].([]any)
		m["charges"] = append(l, "o1")
	})
}

// bookLater books once the world settles.
func (s *lateServer) bookLater() {
	release := make(chan struct{})
	s.mu.Lock()
	s.pending = append(s.pending, release)
	s.mu.Unlock()
	s.landing.Go(func() { <-release; s.book() })
}

func (s *lateServer) settle(context.Context) error {
	s.mu.Lock()
	for _, c := range s.pending {
		close(c)
	}
	s.pending = nil
	s.mu.Unlock()
	s.landing.Wait()
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
