package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuietAtGates checks when a snapshot may be skipped: only while every
// goroutine of the last quiet snapshot, and every older goroutine that
// reached a gate, is parked at a gate and no goroutine was created since.
func TestQuietAtGates(t *testing.T) {
	w := newWorld(false)
	if w.quietAtGates(map[uint64]bool{1: true}) {
		t.Fatal("quiet without any snapshot")
	}
	created, ok := goroutinesCreated()
	if !ok {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	w.noteQuiet([]gInfo{{id: 1}, {id: 2}}, created, 0, true)
	if !w.quietAtGates(map[uint64]bool{1: true, 2: true}) {
		t.Error("not quiet with every goroutine of the snapshot at a gate")
	}
	if w.quietAtGates(map[uint64]bool{1: true}) {
		t.Error("quiet while goroutine 2 is not at a gate")
	}
	w.visitor = map[uint64]bool{7: true} // an older goroutine that reached a gate
	if w.quietAtGates(map[uint64]bool{1: true, 2: true}) {
		t.Error("quiet while an older goroutine that reached a gate is not at one")
	}
	delete(w.visitor, 7)
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
	if w.quietAtGates(map[uint64]bool{1: true, 2: true}) {
		t.Error("quiet after a goroutine was created")
	}
	w.noteQuiet(nil, 0, 0, false)
	if w.quietAtGates(map[uint64]bool{1: true, 2: true}) {
		t.Error("quiet after a snapshot that was not")
	}
}

// TestQuietAtGatesCountsTheHarnessGoroutines checks the accounting of the
// goroutines the harness starts for a scheduled run: the delivery's and
// the invocation's own. The scenario is known quiet without a snapshot
// only while every one of them is parked at a gate or can no longer act,
// and no other goroutine was created in the process.
func TestQuietAtGatesCountsTheHarnessGoroutines(t *testing.T) {
	if _, ok := goroutinesCreated(); !ok {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	w := newWorld(true)
	w.counted = true
	inv := &invocation{n: 1}
	gid := make(chan uint64)
	release, hold, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	w.start(func() {
		rootDone := make(chan struct{})
		w.startRoot(func() {
			defer close(rootDone)
			defer w.returned(inv)
			id := goroutineID()
			w.root(id, 1)
			gid <- id
			<-release // as if parked at a gate
		})
		w.await(inv)
		<-rootDone
		w.awoken(inv)
		<-hold // the delivery goes on: it may act
	}, done)
	root := <-gid
	parked := map[uint64]bool{root: true}
	waitFor(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.waiting == 1 })
	if w.quietAtGates(map[uint64]bool{}) {
		t.Error("quiet while the invocation's goroutine is not at a gate")
	}
	if !w.quietAtGates(parked) {
		t.Error("not quiet with the invocation at a gate and the delivery waiting for it")
	}

	// A goroutine the harness did not start (the agent's, Setup's,
	// another test's) needs a snapshot.
	other := make(chan struct{})
	go func() { <-other }()
	if w.quietAtGates(parked) {
		t.Error("quiet after a goroutine the harness did not start was created")
	}
	close(other)
	w.noteQuiet([]gInfo{{id: root}}, mustCreated(t), w.made, true) // a quiet snapshot
	if !w.quietAtGates(parked) {
		t.Error("not quiet after a quiet snapshot, with nothing created since")
	}

	// The invocation returns: the delivery wakes and may act, until it
	// ends.
	close(release)
	waitFor(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.rootsDone == 1 && w.waiting == 0 })
	if w.quietAtGates(map[uint64]bool{}) {
		t.Error("quiet while the delivery goes on after its invocation returned")
	}
	close(hold)
	<-done
	if !w.quietAtGates(map[uint64]bool{}) {
		t.Error("not quiet once the invocation returned and the delivery ended")
	}

	// Without the accounting (the deliveries run at once, a bubble is
	// asked for), only a snapshot tells.
	w.counted = false
	if w.quietAtGates(map[uint64]bool{}) {
		t.Error("quiet without the accounting after goroutines were created")
	}
}

func mustCreated(t *testing.T) uint64 {
	t.Helper()
	n, ok := goroutinesCreated()
	if !ok {
		t.Fatal("runtime/metrics stopped counting created goroutines")
	}
	return n
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
	}
}

// An agent that starts a goroutine which calls a tool a moment later, while
// its own goroutine is already parked at a gate: the goroutine was not
// started by the harness, so the scheduler must look (a snapshot) and wait
// for it, and both calls are one round of the baseline. Were the new
// goroutine missed, the first call would be released alone and the agent
// would look serial.
func TestGoroutineStartedDuringAGatedRunIsWaitedFor(t *testing.T) {
	var st *store
	agent := func(ctx context.Context) error {
		errc := make(chan error, 1)
		go func() {
			time.Sleep(5 * time.Millisecond)
			errc <- st.putTraced(ctx, "b", 2)
		}()
		if err := st.putTraced(ctx, "a", 1); err != nil {
			return err
		}
		return <-errc
	}
	s := NewSuite("late", agent, Setup(func(context.Context) error { st = newStore(); return nil }), StallTimeout(5*time.Second))
	endSuite(t, s)
	res, err := s.Baseline(context.Background())
	require.NoError(t, err)
	require.False(t, res.Failed, res.Error)
	assert.True(t, s.Parallel(context.Background()), "the two calls were not one round")
	for _, o := range res.Trace.Ops {
		assert.Equal(t, 1, o.Batch, "%s was not in flight with the other call", o.ID)
	}
}
