package runtime

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// receiptDesk charges an order, keyed, and books its receipt a while
// after the checkout asked for it (a service that answers 202), from a
// timer: once per request, or, in the correct world, once per order.
// delay gives the receipt's lag for each Setup (the first is the
// baseline's); a timer armed before the last Setup books nothing.
type receiptDesk struct {
	dedup    bool
	delay    func(setup int) time.Duration
	mu       sync.Mutex
	setups   int
	charges  map[string]int
	receipts []string
}

func (d *receiptDesk) setup(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.setups++
	d.charges, d.receipts = map[string]int{}, nil
	return nil
}

func (d *receiptDesk) snapshot() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := slices.Clone(d.receipts)
	slices.Sort(r)
	return map[string]any{"charges": maps.Clone(d.charges), "receipts": r}
}

func (d *receiptDesk) checkout(ctx context.Context, order string) error {
	d.mu.Lock()
	if _, ok := d.charges[order]; !ok {
		d.charges[order] = 1999
	}
	gen := d.setups
	d.mu.Unlock()
	time.AfterFunc(d.delay(gen), func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.setups != gen || d.dedup && slices.Contains(d.receipts, order) {
			return
		}
		d.receipts = append(d.receipts, order)
	})
	return nil
}

func (d *receiptDesk) run(t *testing.T) *Report {
	t.Helper()
	op := &Op{Name: "checkout", Kind: KindWrite, Params: []string{"order"}}
	call := func(ctx context.Context) error {
		return traced(ctx, op, []any{"o-5"}, []any{"o-5"}, func(ctx context.Context) error { return d.checkout(ctx, "o-5") })
	}
	agent := func(ctx context.Context) error { return againOnInjected(ctx, call) }
	rep, err := Run(context.Background(), t.Name(), agent, Setup(d.setup), State(d.snapshot))
	require.NoError(t, err)
	return rep
}

// A checkout that charges with a key and asks for a receipt the service
// books 5 ms later: a retry, or a redelivery, books a second receipt. The
// charge moved the state in the call's window, the retry's window held
// nothing, and the run's end, with two receipts, was not compared with the
// one the baseline's end held after its last write returned: SAFE on every
// run (red team rS #1, receipts 0 to 10 ms later). The end holds one more
// copy of what the baseline's world did after the call's window: a
// duplicate_write; the service that books one receipt an order is safe.
func TestAReceiptBookedLaterTwiceIsADuplicate(t *testing.T) {
	for _, dedup := range []bool{false, true} {
		for range 3 {
			d := &receiptDesk{dedup: dedup, delay: func(int) time.Duration { return 5 * time.Millisecond }}
			rep := d.run(t)
			if dedup {
				for _, r := range rep.Results {
					assert.Empty(t, r.Findings, "the correct desk's %s: %q", r.Scenario, r.Trace.Notes)
				}
				continue
			}
			for _, sc := range []string{"lost_acknowledgement/checkout#1", "crash_restart/checkout#1", ScenarioDuplicateSeq} {
				r := resultOf(t, rep, sc)
				if assert.NotEmpty(t, r.Findings, "%s: %q", sc, r.Trace.Notes) {
					assert.Equal(t, CodeDuplicateWrite, r.Findings[0].Code)
					assert.Contains(t, r.Findings[0].Message, "one more copy")
				}
			}
		}
	}
}

// Where the baseline's receipt never came while it was looked at (a cold
// service, on first use) and a later run's came after its last write
// returned, the baseline's end held no receipt and the run's did: the
// ends cannot say whether a retry booked a second one. The retry's
// scenario is inconclusive, and says to give a Settle, for the correct
// desk and the one that books twice alike; before, both passed. Here the
// agent itself has the service book what is pending, untraced, after its
// last write returned, and the service books nothing in the baseline's
// world: the same on every run.
func TestALateEffectTheBaselineNeverSawLeavesTheRunUnjudged(t *testing.T) {
	op := &Op{Name: "checkout", Kind: KindWrite, Params: []string{"order"}}
	for _, dedup := range []bool{false, true} {
		var mu sync.Mutex
		var setups int
		var charges map[string]int
		var pending, receipts []string
		call := func(ctx context.Context) error {
			return traced(ctx, op, []any{"o-5"}, []any{"o-5"}, func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				if _, ok := charges["o-5"]; !ok {
					charges["o-5"] = 1999 // keyed
				}
				pending = append(pending, "o-5") // a receipt per request
				return nil
			})
		}
		flush := func() {
			mu.Lock()
			defer mu.Unlock()
			if setups == 1 {
				return // cold in the baseline's world: nothing booked
			}
			for _, o := range pending {
				if !dedup || !slices.Contains(receipts, o) {
					receipts = append(receipts, o)
				}
			}
			pending = nil
		}
		agent := func(ctx context.Context) error {
			err := againOnInjected(ctx, call)
			flush()
			return err
		}
		rep, err := Run(context.Background(), t.Name(), agent,
			Setup(func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				setups++
				charges, pending, receipts = map[string]int{}, nil, nil
				return nil
			}),
			State(func() any {
				mu.Lock()
				defer mu.Unlock()
				return map[string]any{"charges": maps.Clone(charges), "receipts": slices.Clone(receipts)}
			}))
		require.NoError(t, err)
		r := resultOf(t, rep, "lost_acknowledgement/checkout#1")
		assert.True(t, r.Inconclusive, "dedup=%v: %q", dedup, r.Trace.Notes)
		assert.Contains(t, strings.Join(r.Trace.Notes, "\n"), "its end holds none of what landed late here", "dedup=%v", dedup)
	}
}

// A world where what lands late is only a moment restamped (a sync's
// last-run time, stamped by Setup, and in later runs again after the
// agent's last write returned): the two ends differ in that moment alone,
// which two equal runs may, and the run is judged as any other is. The
// ends were compared as raw snapshots, and the run left inconclusive.
func TestALateRestampTheBaselineNeverSawLeavesTheRunJudged(t *testing.T) {
	op := &Op{Name: "checkout", Kind: KindWrite, Params: []string{"order"}}
	var mu sync.Mutex
	var setups int
	var charges map[string]int
	var syncedAt string
	stamp := func() { syncedAt = time.Now().UTC().Format(time.RFC3339Nano) }
	call := func(ctx context.Context) error {
		return traced(ctx, op, []any{"o-5"}, []any{"o-5"}, func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			if _, ok := charges["o-5"]; !ok {
				charges["o-5"] = 1999 // keyed
			}
			return nil
		})
	}
	agent := func(ctx context.Context) error {
		err := againOnInjected(ctx, call)
		time.Sleep(time.Millisecond)
		mu.Lock()
		if setups > 1 {
			stamp() // the sync runs again, after the last write returned
		}
		mu.Unlock()
		return err
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			setups++
			charges = map[string]int{}
			stamp()
			return nil
		}),
		State(func() any {
			mu.Lock()
			defer mu.Unlock()
			return map[string]any{"charges": maps.Clone(charges), "synced_at": syncedAt}
		}))
	require.NoError(t, err)
	r := resultOf(t, rep, "lost_acknowledgement/checkout#1")
	assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "its end holds none of what landed late here")
	assert.False(t, r.Inconclusive, "%q", r.Trace.Notes)
	assert.Empty(t, findings(rep, ""))
}

// againOnInjected makes call, and makes it once more where it failed with
// an injected fault, as an agent that retries a failed call does.
func againOnInjected(ctx context.Context, call func(context.Context) error) error {
	err := call(ctx)
	var inj *InjectedError
	if errors.As(err, &inj) {
		err = call(ctx)
	}
	return err
}
