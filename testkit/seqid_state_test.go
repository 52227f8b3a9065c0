package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// desk is a help desk fake of the usual shape: tickets get the next
// number, and opening a ticket for a subject that has one changes nothing.
type seqDesk struct {
	mu      sync.Mutex
	next    int
	tickets map[string]string // id -> subject
}

var openForOp = &runtime.Op{Name: "open_for", Kind: runtime.KindWrite, Params: []string{"subject"}}

func (d *seqDesk) openFor(ctx context.Context, subject string) error {
	return tracedCall(ctx, openForOp, []any{subject}, []any{subject}, nil, func(context.Context) error {
		time.Sleep(time.Millisecond) // the round trip to the desk's API
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, s := range d.tickets {
			if s == subject {
				return nil
			}
		}
		d.next++
		d.tickets[fmt.Sprintf("T-%d", d.next)] = subject
		return nil
	})
}

// One model turn opens two tickets in parallel; a repeat of either
// changes nothing. The ticket numbers follow the order the two opens ran
// in, which under duplicate_delivery/concurrent (no gates inside a
// delivery) is either order: the end state then differs from the
// baseline's by the numbers alone. On the runs where all four calls
// overlapped the suite reported a duplicate_write (helper-44's report);
// the end states are now compared without the numbers the opens made
// (runtime/madenames.go), and every run is safe.
func TestSequentialIDsInStateAfterConcurrentDelivery(t *testing.T) {
	d := &seqDesk{}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, s := range []string{"printer jam", "vpn down"} {
			wg.Go(func() { errs[i] = d.openFor(ctx, s) })
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	verdicts := map[string]int{}
	for range 10 {
		rep := testkit.Run(t, agent, testkit.NoSummary(),
			testkit.Setup(func(context.Context) error {
				d.mu.Lock()
				d.next, d.tickets = 0, map[string]string{}
				d.mu.Unlock()
				return nil
			}),
			testkit.State(func() any { d.mu.Lock(); defer d.mu.Unlock(); return maps.Clone(d.tickets) }))
		verdicts[verdictOf(rep)]++
	}
	for v, n := range verdicts {
		if v != "" {
			t.Errorf("%d of 10 runs found, on a correct agent:\n%s", n, v)
		}
	}
}
