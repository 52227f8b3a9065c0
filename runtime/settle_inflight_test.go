package runtime

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// The agent places order o2 and, while the shop's server is still taking
// the order (its handler queues the booking for a worker at the end), sends
// a notification for o1 in parallel, retried once on a timeout. The retry
// is a repeat: the world is let settle after it, while place is still in
// flight. place then queues its booking, which lands only at the next
// settle. Once both are done the agent charges o2: the charge times out
// having done nothing, and its retry pays and counts an event, as the
// booking does. The world settled while place ran, not after it: what
// lands before the charge's retry is place's booking, not the failed
// charge's. The charge ran once; no duplicate.
func TestLateEffectOfAWriteInFlightDuringASettleIsNotTheFailedCalls(t *testing.T) {
	place := &Op{Name: "place", Kind: KindWrite, Params: []string{"order"}}
	notify := &Op{Name: "notify", Kind: KindWrite, Params: []string{"order"}}
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	w := &kvWorld{}
	srv := &lateServer{w: w}
	var (
		smu     sync.Mutex
		settles int
		waiters = map[int][]chan struct{}{}
	)
	settle := func(ctx context.Context) error {
		err := srv.settle(ctx)
		smu.Lock()
		settles++
		for _, c := range waiters[settles] {
			close(c)
		}
		delete(waiters, settles)
		smu.Unlock()
		return err
	}
	// settled returns a channel closed once the world settled n more times.
	settled := func(n int) chan struct{} {
		c := make(chan struct{})
		smu.Lock()
		waiters[settles+n] = append(waiters[settles+n], c)
		smu.Unlock()
		return c
	}
	bump := func(m map[string]any) { m["events"] = num(m["events"]) + 1 }
	timeout := errors.New("context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
	agent := func(ctx context.Context) error {
		placing := make(chan struct{})
		var once sync.Once
		var wg sync.WaitGroup
		wg.Go(func() {
			defer once.Do(func() { close(placing) })
			_ = traced(ctx, place, []any{"o2"}, []any{"o2"}, func(context.Context) error {
				twice := settled(2)
				once.Do(func() { close(placing) })
				// The handler queues the booking as it ends: after the
				// notification's retry was settled, here.
				select {
				case <-twice:
				case <-time.After(500 * time.Millisecond):
				}
				srv.later(func() { w.do(func(m map[string]any) { m["o2"] = "booked"; bump(m) }) })
				return nil
			})
		})
		<-placing
		first := true
		for range 2 {
			if err := traced(ctx, notify, []any{"o1"}, []any{"o1"}, func(context.Context) error {
				if first {
					first = false
					return timeout
				}
				return w.do(func(m map[string]any) { m["notified"] = "o1" })
			}); err == nil || ctx.Err() != nil {
				break
			}
		}
		wg.Wait()
		first = true
		var err error
		for range 3 {
			err = traced(ctx, charge, []any{"o2"}, []any{"o2"}, func(context.Context) error {
				if first {
					first = false
					return timeout
				}
				return w.do(func(m map[string]any) { m["paid"] = "o2"; bump(m) })
			})
			if err == nil || ctx.Err() != nil {
				return err
			}
		}
		return err
	}
	rep := runOn(t, w, nil, agent, Settle(settle))
	if got := findings(rep, ScenarioBaseline); slices.Contains(got, CodeDuplicateWrite+" charge") {
		t.Fatalf("baseline findings %v: the charge ran once", got)
	}
}
