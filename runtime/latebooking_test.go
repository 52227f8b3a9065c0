package runtime

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// asyncPayouts accepts a payout at once and books it 8 ms later, in a
// worker of its own, as a payouts API that answers 202 does; with dedup,
// it accepts a key once. One service serves the whole test, started before the
// suite, and Setup only empties it: a booking still pending when a
// scenario ends lands in the next one's world.
type asyncPayouts struct {
	dedup   bool
	mu      sync.Mutex
	payouts []string
	seen    map[string]bool
	jobs    chan string
	done    chan struct{}
}

func newAsyncPayouts(dedup bool) *asyncPayouts {
	s := &asyncPayouts{dedup: dedup, seen: map[string]bool{}, jobs: make(chan string, 16), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for key := range s.jobs {
			time.Sleep(8 * time.Millisecond)
			s.mu.Lock()
			s.payouts = append(s.payouts, key)
			s.mu.Unlock()
		}
	}()
	return s
}

// pay accepts the payout of key, unless, with dedup, it was accepted
// before: the booking is queued, and made whatever Setup does meanwhile.
func (s *asyncPayouts) pay(key string) {
	s.mu.Lock()
	dup := s.dedup && s.seen[key]
	s.seen[key] = true
	s.mu.Unlock()
	if !dup {
		s.jobs <- key
	}
}

func (s *asyncPayouts) stop() { close(s.jobs); <-s.done }

// A run that did not repeat the write (lost_request, before_operation_
// failure: the failed call never ran, its retry did) read its end as its
// agent returned, the retry's booking still pending: it landed after the
// next scenario's Setup, and that scenario's crash_restart of the correct
// agent ended with three payouts, a duplicate_write in 10 runs of 10 (red
// team rW). Where the baseline's state changed outside every traced
// write, every run's end that differs from the baseline's is read once it
// held still. The buggy agent, whose service pays twice, is still caught.
func TestALateBookingStaysInItsOwnScenario(t *testing.T) {
	payout := &Op{Name: "payout", Kind: KindWrite, Params: []string{"to"}}
	for _, dedup := range []bool{true, false} {
		svc := newAsyncPayouts(dedup)
		agent := func(ctx context.Context) error {
			call := func() error {
				return traced(ctx, payout, []any{"bob"}, []any{"bob"}, func(context.Context) error {
					svc.pay("bob")
					return nil
				})
			}
			if err := call(); err != nil {
				return call()
			}
			return nil
		}
		rep, err := Run(context.Background(), t.Name(), agent,
			Setup(func(context.Context) error {
				svc.mu.Lock()
				svc.payouts, svc.seen = nil, map[string]bool{}
				svc.mu.Unlock()
				return nil
			}),
			State(func() any {
				svc.mu.Lock()
				defer svc.mu.Unlock()
				return map[string]any{"payouts": slices.Clone(svc.payouts)}
			}))
		svc.stop()
		require.NoError(t, err)
		if !dedup {
			assert.NotEmpty(t, findings(rep, "crash_restart/payout#1"), "the buggy agent's crash_restart")
			continue
		}
		for _, r := range rep.Results {
			assert.Empty(t, r.Findings, "the correct agent's %s: %q", r.Scenario, r.Trace.Notes)
		}
	}
}
