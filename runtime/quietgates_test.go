package runtime

import (
	"context"
	goruntime "runtime"
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
	if w.quietAtGates(gids{1}) {
		t.Fatal("quiet without any snapshot")
	}
	created, ok := goroutinesCreated()
	if !ok {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	w.noteQuiet([]gInfo{{id: 1}, {id: 2}}, created, 0, true)
	if !w.quietAtGates(gids{1, 2}) {
		t.Error("not quiet with every goroutine of the snapshot at a gate")
	}
	if w.quietAtGates(gids{1}) {
		t.Error("quiet while goroutine 2 is not at a gate")
	}
	w.visitor = map[uint64]bool{7: true} // an older goroutine that reached a gate
	if w.quietAtGates(gids{1, 2}) {
		t.Error("quiet while an older goroutine that reached a gate is not at one")
	}
	delete(w.visitor, 7)
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
	if w.quietAtGates(gids{1, 2}) {
		t.Error("quiet after a goroutine was created")
	}
	w.noteQuiet(nil, 0, 0, false)
	if w.quietAtGates(gids{1, 2}) {
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
	parked := gids{root}
	waitFor(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.waiting == 1 })
	if w.quietAtGates(gids{}) {
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
	if w.quietAtGates(gids{}) {
		t.Error("quiet while the delivery goes on after its invocation returned")
	}
	close(hold)
	<-done
	if !w.quietAtGates(gids{}) {
		t.Error("not quiet once the invocation returned and the delivery ended")
	}

	// Without the accounting (the deliveries run at once, a bubble is
	// asked for), only a snapshot tells.
	w.counted = false
	if w.quietAtGates(gids{}) {
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

// An agent whose second call's goroutine asks the Go runtime to stop the
// world (runtime.ReadMemStats, as a metrics exporter does) on its way to
// the gate, while the first call already waits at its own. When the
// stack snapshot that reads quiescence stops the world too, or a garbage
// collection starts, the goroutine waits on a semaphore of the runtime:
// its state reads "semacquire", but only the runtime ends that wait, not
// another goroutine of the agent. Taken for blocked, it let the first call
// be released alone, and the agent looked serial. A goroutine that
// allocates into the start of a collection waits the same way (the MCP
// SDK's JSON decoders did, in TestDependentPairOverMCPIsCaught). The wait
// needs two Ps: with GOMAXPROCS=1 it never overlaps a snapshot.
func TestGoroutineWaitingOnTheGoRuntimeIsWaitedFor(t *testing.T) {
	var st *store
	agent := func(ctx context.Context) error {
		errc := make(chan error, 1)
		go func() {
			var ms goruntime.MemStats
			for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
				goruntime.ReadMemStats(&ms)
			}
			errc <- st.putTraced(ctx, "b", 2)
		}()
		if err := st.putTraced(ctx, "a", 1); err != nil {
			return err
		}
		return <-errc
	}
	for i := range 5 {
		s := NewSuite("runtime-wait", agent, Setup(func(context.Context) error { st = newStore(); return nil }), StallTimeout(5*time.Second))
		endSuite(t, s)
		res, err := s.Baseline(context.Background())
		require.NoError(t, err)
		require.False(t, res.Failed, res.Error)
		require.True(t, s.Parallel(context.Background()), "run %d: the two calls were not one round", i)
		for _, o := range res.Trace.Ops {
			assert.Equal(t, 1, o.Batch, "run %d: %s was not in flight with the other call", i, o.ID)
		}
	}
}

// TestRuntimeWaitsAreBusy checks the states of a stack dump that look
// blocked but that the Go runtime ends by itself: a goroutine in them goes
// on without any other goroutine acting, so it is busy. A semaphore of
// package sync or of a file descriptor's lock waits for another goroutine,
// as a channel does.
func TestRuntimeWaitsAreBusy(t *testing.T) {
	for _, tc := range []struct {
		block string
		busy  bool
		why   string
	}{
		{"goroutine 7 [semacquire]:\nexample.com/agent.decode(0xc000010000)\n\t/src/agent/decode.go:12 +0x2d\ncreated by example.com/agent.run in goroutine 6\n\t/src/agent/run.go:30 +0x42",
			true, "waiting for the Go runtime"},
		{"goroutine 8 [semacquire]:\ninternal/runtime/maps.newarray(0x20?, 0xcaba60?)\n\t/usr/local/go/src/runtime/malloc.go:2231 +0x13\nexample.com/agent.index(...)\n\t/src/agent/index.go:9",
			true, "waiting for the Go runtime"},
		{"goroutine 9 [wait for GC cycle]:\nexample.com/agent.flush()\n\t/src/agent/flush.go:5 +0x1a",
			true, "wait for GC cycle"},
		{"goroutine 10 [semacquire]:\ninternal/poll.runtime_Semacquire(0xc0000a4038?)\n\t/usr/local/go/src/runtime/sema.go:76 +0x25\ninternal/poll.(*fdMutex).rwlock(0xc0000a4020, 0x1)\n\t/usr/local/go/src/internal/poll/fd_mutex.go:154 +0xc5",
			false, ""},
		{"goroutine 11 [sync.Mutex.Lock]:\nsync.runtime_SemacquireMutex(0xc000012345?, 0x0?, 0x1?)\n\t/usr/local/go/src/runtime/sema.go:95 +0x25\nsync.(*Mutex).lockSlow(0xc000012340)\n\t/usr/local/go/src/sync/mutex.go:149 +0x15d",
			false, ""},
		// SQLite's busy handler (the database is locked by another
		// connection) sleeps in a select on a timer: it wakes by itself.
		{"goroutine 12 [select]:\nmodernc.org/sqlite.busyHandler(0xc000100000?, 0x7f0000001000, 0x3)\n\t/go/pkg/mod/modernc.org/sqlite@v1.62.0/busy.go:86 +0x1c5\nmodernc.org/sqlite/lib.Xsqlite3_step(0xc000100000, 0x7f0000002000)",
			true, "asleep in a timed wait"},
		{"goroutine 13 [select]:\ngolang.org/x/time/rate.(*Limiter).wait(0xc000200000, {0xa1a950, 0xc000300000}, 0x1, {0x0?, 0x0?, 0x0?}, 0xb2c180)\n\t/go/pkg/mod/golang.org/x/time@v0.12.0/rate/rate.go:286 +0x3a5",
			true, "asleep in a timed wait"},
		// A select of the agent's own (on a channel a worker sends to)
		// is quiet.
		{"goroutine 14 [select]:\nexample.com/agent.collect(0xc000010000)\n\t/src/agent/collect.go:20 +0x9d",
			false, ""},
	} {
		g, ok := parseGoroutine(tc.block)
		require.True(t, ok, tc.block)
		busy, why := g.busy(time.Time{})
		assert.Equal(t, tc.busy, busy, "goroutine %d [%s]", g.id, g.state)
		assert.Equal(t, tc.why, why, "goroutine %d [%s]", g.id, g.state)
	}
}
