package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// While the tool bodies of a round run (released at their start gates,
// not yet at their finish gates), the scenario cannot be quiet for the
// first bodyFresh of each body: the scheduler waits for a call to reach a
// gate instead of taking snapshots of every stack, each a stop of the
// world. Before, it polled from 2 us on, doubling, and an agent whose
// tools call HTTP services took a snapshot every few hundred microseconds
// of each request (its scenarios took milliseconds each).
func TestNoSnapshotWhileAFreshToolBodyRuns(t *testing.T) {
	op := &Op{Name: "fetch", Kind: KindRead, Params: []string{"k"}}
	var (
		mu     sync.Mutex
		bodies [][2]time.Time // when each tool body ran, as the world saw it begin
		snaps  []time.Time    // when each stack dump was taken
	)
	fetch := func(ctx context.Context, k string) error {
		c, _ := Begin(ctx, op, []any{k}, nil, nil)
		if err := c.Start(); err != nil {
			return err
		}
		began := c.inv.rec.world.bodySince(goroutineID()) // set when the start gate opened
		if began.IsZero() {
			return fmt.Errorf("the body of %s began unseen", k)
		}
		time.Sleep(5 * time.Millisecond) // an HTTP request on its way
		mu.Lock()
		bodies = append(bodies, [2]time.Time{began, time.Now()})
		mu.Unlock()
		return c.Finish(nil)
	}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		for _, k := range []string{"a", "b"} { // one round of two calls
			wg.Go(func() { _ = fetch(ctx, k) })
		}
		wg.Wait()
		return fetch(ctx, "c")
	}
	testHookStacks = func() {
		mu.Lock()
		snaps = append(snaps, time.Now())
		mu.Unlock()
	}
	defer func() { testHookStacks = nil }()
	s := NewSuite("fresh-body", agent)
	defer s.Report()
	base, err := s.Baseline(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if base.Error != "" {
		t.Fatal(base.Error)
	}
	if n := len(base.Trace.Ops); n != 3 {
		t.Fatalf("the baseline traced %d calls, want 3", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 3 {
		t.Fatalf("%d tool bodies ran, want 3", len(bodies))
	}
	for _, b := range bodies {
		fresh := b[0].Add(bodyFresh)
		for _, at := range snaps {
			if at.After(b[0]) && at.Before(b[1]) && at.Before(fresh) {
				t.Fatalf("a snapshot was taken %v into a tool body (of %v), within its first %v", at.Sub(b[0]), b[1].Sub(b[0]), bodyFresh)
			}
		}
	}
}
