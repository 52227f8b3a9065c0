package testkit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

var queueShipOp = &runtime.Op{Name: "ship", Kind: runtime.KindWrite, Params: []string{"ref", "sku"}}

// lazyOutbox is a warehouse whose worker ships a queued order a while
// after it was queued (delay), or at once when a call flushes the queue:
// the keyed ship of an order already queued flushes it, as a client that
// makes sure the order it was asked for is on its way. A worker starved
// past SettleOn's quiet time looks the same to the judge: the first
// execution's shipment lands inside the repeat's window.
type lazyOutbox struct {
	delay  time.Duration
	naive  bool
	events *testkit.Stream

	mu      sync.Mutex
	stock   map[string]int
	queued  []queuedShipment
	seen    map[string]bool
	stop    chan struct{}
	stopped chan struct{}
}

type queuedShipment struct {
	sku string
	at  time.Time
}

func (o *lazyOutbox) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stock = map[string]int{"a": 10, "b": 10}
	o.queued, o.seen = nil, map[string]bool{}
	o.events = testkit.NewStream()
	o.stop, o.stopped = make(chan struct{}), make(chan struct{})
	go everyMillisecond(o.stop, o.stopped, func() { o.ship(false) }) // what waited delay
}

func (o *lazyOutbox) close() { close(o.stop); <-o.stopped }

// everyMillisecond is a warehouse's worker: it calls work every
// millisecond until stop is closed, then closes stopped.
func everyMillisecond(stop, stopped chan struct{}, work func()) {
	defer close(stopped)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			work()
		}
	}
}

// ship ships the queued orders that waited delay, or all of them.
func (o *lazyOutbox) ship(all bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var left []queuedShipment
	for _, q := range o.queued {
		if !all && time.Since(q.at) < o.delay {
			left = append(left, q)
			continue
		}
		o.stock[q.sku]--
		o.events.Emit(testkit.Event{Kind: "shipped", Subject: q.sku})
	}
	o.queued = left
}

func (o *lazyOutbox) queue(ctx context.Context, ref, sku string) error {
	return tracedOp(ctx, queueShipOp, []any{ref, sku}, func(context.Context) error {
		o.mu.Lock()
		if o.seen[ref] && !o.naive {
			o.mu.Unlock()
			o.ship(true) // already queued: see that it goes out
			return nil
		}
		o.seen[ref] = true
		o.queued = append(o.queued, queuedShipment{sku: sku, at: time.Now()})
		o.mu.Unlock()
		return nil
	})
}

func (o *lazyOutbox) pending(context.Context) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.queued) == 0, nil
}

func (o *lazyOutbox) levels() any {
	o.mu.Lock()
	defer o.mu.Unlock()
	return fmt.Sprint(o.stock)
}

func (o *lazyOutbox) agent(ctx context.Context) error {
	for _, q := range [][2]string{{"o1", "a"}, {"o2", "b"}} {
		if err := o.queue(ctx, q[0], q[1]); err != nil {
			return err
		}
	}
	return nil
}

func (o *lazyOutbox) run(t *testing.T, settle testkit.Option) *runtime.Report {
	return testkit.Run(t, o.agent, testkit.NoSummary(),
		testkit.Setup(func(context.Context) error { o.reset(); return nil }),
		testkit.Teardown(func(context.Context) error { o.close(); return nil }),
		testkit.State(o.levels), settle, testkit.StallTimeout(5*time.Second))
}

func duplicateScenarios(rep *runtime.Report) []string {
	var out []string
	for s, cs := range codes(rep) {
		if slices.Contains(cs, runtime.CodeDuplicateWrite) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// SettleUntil asks the world whether its work is done, where SettleOn
// guesses from a quiet stream: with a worker slower than the quiet time,
// the keyed outbox is judged by when the worker ran, and with SettleUntil
// by what it did, the same on every run; the naive outbox is caught.
func TestSettleUntilWaitsForTheWorldItself(t *testing.T) {
	t.Run("SettleOn guesses", func(t *testing.T) {
		// The worker ships a second after queueing: the stream is quiet
		// long before, the repeat flushes the first execution's shipment
		// inside its own window, and the stock it took is counted as the
		// repeat's doing.
		o := &lazyOutbox{delay: time.Second}
		rep := o.run(t, testkit.SettleOn(streamOfOutbox{o}, 3*time.Millisecond))
		assert.Contains(t, duplicateScenarios(rep), "duplicate_delivery/sequential",
			"a quiet stream is taken for a settled world, and the late shipment for the repeat's")
	})
	t.Run("SettleUntil asks", func(t *testing.T) {
		verdicts := map[string]int{}
		for range 3 {
			o := &lazyOutbox{delay: 20 * time.Millisecond}
			rep := o.run(t, testkit.SettleUntil(o.pending, 2*time.Second))
			require.Empty(t, duplicateScenarios(rep), "the keyed outbox ships each order once")
			noStall(t, rep)
			verdicts[fmt.Sprint(codes(rep))]++
		}
		assert.Len(t, verdicts, 1, "one verdict on every run: %v", verdicts)
	})
	t.Run("naive caught", func(t *testing.T) {
		o := &lazyOutbox{delay: 20 * time.Millisecond, naive: true}
		rep := o.run(t, testkit.SettleUntil(o.pending, 2*time.Second))
		assert.Contains(t, duplicateScenarios(rep), "duplicate_delivery/sequential", "every repeat queues and ships another")
	})
}

// streamOfOutbox is the current scenario's stream of shipments.
type streamOfOutbox struct{ o *lazyOutbox }

func (s streamOfOutbox) Events() []testkit.Event {
	s.o.mu.Lock()
	defer s.o.mu.Unlock()
	return s.o.events.Events()
}

func TestSettleUntilRejectsBadInput(t *testing.T) {
	assert.Panics(t, func() { testkit.SettleUntil(nil, time.Second) })
	assert.Panics(t, func() {
		testkit.SettleUntil(func(context.Context) (bool, error) { return true, nil }, 0)
	})
}

// overlapOutbox queues each order for a worker that ships it 40 ms later.
// Its ship waits, up to 15 ms, for a second call of the same order, so
// that under concurrent delivery the two calls are in the tool at once:
// the one that came in first queues the order, the other finds it queued
// and returns 5 ms after it.
type overlapOutbox struct {
	naive bool

	mu      sync.Mutex
	stock   int
	queued  []time.Time
	seen    map[string]bool
	inside  map[string]chan struct{}
	stop    chan struct{}
	stopped chan struct{}
}

func (o *overlapOutbox) reset() {
	o.mu.Lock()
	o.stock, o.queued, o.seen, o.inside = 10, nil, map[string]bool{}, map[string]chan struct{}{}
	o.stop, o.stopped = make(chan struct{}), make(chan struct{})
	o.mu.Unlock()
	go everyMillisecond(o.stop, o.stopped, func() {
		o.mu.Lock()
		for len(o.queued) > 0 && time.Since(o.queued[0]) >= 40*time.Millisecond {
			o.queued, o.stock = o.queued[1:], o.stock-1
		}
		o.mu.Unlock()
	})
}

func (o *overlapOutbox) ship(ctx context.Context, ref string) error {
	return tracedOp(ctx, queueShipOp, []any{ref, "a"}, func(context.Context) error {
		o.mu.Lock()
		other, second := o.inside[ref]
		if !second {
			other = make(chan struct{})
			o.inside[ref] = other
		} else {
			delete(o.inside, ref)
			close(other)
		}
		o.mu.Unlock()
		if !second {
			select {
			case <-other:
			case <-time.After(15 * time.Millisecond):
				o.mu.Lock()
				delete(o.inside, ref)
				o.mu.Unlock()
			}
		}
		o.mu.Lock()
		queue := o.naive || !o.seen[ref]
		o.seen[ref] = true
		if queue {
			o.queued = append(o.queued, time.Now())
		}
		o.mu.Unlock()
		if !queue {
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	})
}

// With an exact Settle, the two concurrent calls of the keyed outbox form
// one cluster whose window, settled after the repeat, holds the shipment
// that landed 40 ms later; one execution in the baseline, never settled
// around, left the stock as it was. The cluster is judged by the run's end
// (the stock one delivery left), not against that window: no
// duplicate_write; the naive outbox, two shipments at the end, is caught.
func TestSettledClusterIsJudgedByTheEnd(t *testing.T) {
	for _, naive := range []bool{false, true} {
		o := &overlapOutbox{naive: naive}
		rep := testkit.Run(t, func(ctx context.Context) error { return o.ship(ctx, "o1") }, testkit.NoSummary(),
			testkit.Setup(func(context.Context) error { o.reset(); return nil }),
			testkit.Teardown(func(context.Context) error { close(o.stop); <-o.stopped; return nil }),
			testkit.State(func() any { o.mu.Lock(); defer o.mu.Unlock(); return o.stock }),
			testkit.SettleUntil(func(context.Context) (bool, error) {
				o.mu.Lock()
				defer o.mu.Unlock()
				return len(o.queued) == 0, nil
			}, 2*time.Second))
		got := slices.Contains(duplicateScenarios(rep), "duplicate_delivery/concurrent")
		assert.Equal(t, naive, got, "naive=%v: duplicate_delivery/concurrent reported a duplicate_write: %v\n%v", naive, got, codes(rep))
	}
}

// A world that never reports its work done: the settle gives up after
// within, and the judge says why in the scenario's report rather than
// judging a window it could not wait for.
func TestSettleUntilThatNeverHoldsIsReported(t *testing.T) {
	o := &lazyOutbox{delay: time.Hour}
	rep := o.run(t, testkit.SettleUntil(func(context.Context) (bool, error) { return false, nil }, 5*time.Millisecond))
	found := false
	for _, r := range rep.Results {
		for _, op := range r.Trace.Ops {
			found = found || strings.Contains(op.StateError, "SettleUntil: the world still had work pending after 5ms")
		}
	}
	assert.True(t, found, "no operation's state_error says the settle gave up")
}
