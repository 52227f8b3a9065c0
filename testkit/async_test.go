package testkit_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// asyncT is a testkit.TB that records failures, so a test can prove that
// an async assertion FAILS, and when (on the bubble's clock).
type asyncT struct {
	mu     sync.Mutex
	errors []string
}

func (f *asyncT) Helper()             {}
func (f *asyncT) Name() string        { return "TestAsync" }
func (f *asyncT) Logf(string, ...any) {}
func (f *asyncT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *asyncT) failed() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.errors) > 0 }
func (f *asyncT) msg() string  { f.mu.Lock(); defer f.mu.Unlock(); return strings.Join(f.errors, "\n") }

// emitAfter emits e on s after each delay (counted from the call), in a
// goroutine that the returned wait func joins.
func emitAfter(s *testkit.Stream, e testkit.Event, delays ...time.Duration) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		for _, d := range delays {
			time.Sleep(time.Until(start.Add(d)))
			s.Emit(e)
		}
	})
	return wg.Wait
}

// nudge is how far past its logical instant a virtual-time assertion
// returns: it looks one nanosecond late, once everything due has run.
const nudge = time.Nanosecond

var opened = testkit.Event{Kind: "ticket.opened", Subject: "D-1", Queue: "disputes", Session: "s-1"}

func TestDetectClock(t *testing.T) {
	assert.Equal(t, testkit.RealClock, testkit.DetectClock())
	synctest.Test(t, func(t *testing.T) {
		assert.Equal(t, testkit.VirtualClock, testkit.DetectClock())
		time.Sleep(24 * time.Hour * 365)
		assert.Equal(t, testkit.VirtualClock, testkit.DetectClock(), "a year of virtual time is still a bubble")
	})
}

func TestExactlyOneSucceedsWhenTheWindowCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testkit.NewStream()
		wait := emitAfter(s, opened, 50*time.Millisecond)
		defer wait()
		ft := &asyncT{}
		start := time.Now()
		e, ok := testkit.ExactlyOne(ft, s, testkit.KindFor("ticket.opened", "D-1"), time.Second,
			testkit.OnQueue("disputes"), testkit.FromSession("s-1"), testkit.Since(start))
		require.True(t, ok, ft.msg())
		assert.False(t, ft.failed())
		assert.Equal(t, 1, e.Seq)
		assert.Equal(t, 50*time.Millisecond, e.At.Sub(start), "stamped on the virtual clock")
		assert.Equal(t, time.Second+nudge, time.Since(start), "one match succeeds only when the window closes")
	})
}

func TestExactlyOneSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testkit.NewStream()
		wait := emitAfter(s, opened, 50*time.Millisecond)
		defer wait()
		ft := &asyncT{}
		start := time.Now()
		_, ok := testkit.ExactlyOne(ft, s, testkit.Kind("ticket.opened"), time.Second, testkit.Settle(100*time.Millisecond))
		require.True(t, ok, ft.msg())
		assert.Equal(t, 150*time.Millisecond+nudge, time.Since(start), "settle counts from the match")
	})
}

func TestExactlyOneFailsAtOnceOnASecondMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testkit.NewStream()
		wait := emitAfter(s, opened, 50*time.Millisecond, 120*time.Millisecond)
		defer wait()
		ft := &asyncT{}
		start := time.Now()
		_, ok := testkit.ExactlyOne(ft, s, testkit.KindFor("ticket.opened", "D-1"), time.Second, testkit.OnQueue("disputes"))
		assert.False(t, ok)
		assert.Equal(t, 120*time.Millisecond+nudge, time.Since(start), "fails at once, not at the window's end")
		assert.Equal(t, `testkit.ExactlyOne: want exactly one ticket.opened D-1 on queue "disputes" within 1s (virtual time); `+
			`saw 2 by +120ms: #1 ticket.opened D-1 queue="disputes" session="s-1" at +50ms, `+
			`#2 ticket.opened D-1 queue="disputes" session="s-1" at +120ms`, ft.msg())
	})
}

func TestExactlyOneSettleMissesALateDuplicate(t *testing.T) {
	// Settle trades the window for speed: a duplicate later than the
	// settle time is not seen. Documented, and pinned here.
	synctest.Test(t, func(t *testing.T) {
		s := testkit.NewStream()
		wait := emitAfter(s, opened, 50*time.Millisecond, 300*time.Millisecond)
		defer wait()
		ft := &asyncT{}
		_, ok := testkit.ExactlyOne(ft, s, testkit.Kind("ticket.opened"), time.Second, testkit.Settle(100*time.Millisecond))
		assert.True(t, ok)
		ft2 := &asyncT{}
		_, ok = testkit.ExactlyOne(ft2, s, testkit.Kind("ticket.opened"), time.Second)
		assert.False(t, ok, "without Settle the window sees both")
	})
}

func TestExactlyOneRoutingGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testkit.NewStream()
		misrouted := opened
		misrouted.Queue = "general"
		wait := emitAfter(s, misrouted, 50*time.Millisecond)
		defer wait()
		ft := &asyncT{}
		start := time.Now()
		e, ok := testkit.ExactlyOne(ft, s, testkit.KindFor("ticket.opened", "D-1"), time.Second, testkit.OnQueue("disputes"))
		assert.False(t, ok)
		assert.Equal(t, "general", e.Queue)
		assert.Equal(t, 50*time.Millisecond+nudge, time.Since(start), "a broken guard fails at once")
		assert.Equal(t, `testkit.ExactlyOne: want exactly one ticket.opened D-1 on queue "disputes" within 1s (virtual time); `+
			`saw #1 ticket.opened D-1 queue="general" session="s-1" at +50ms: routing guard: on queue "general", want "disputes"`, ft.msg())
	})
}

func TestExactlyOneAttributionScope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testkit.NewStream()
		other := opened
		other.Session = "s-2"
		wait := emitAfter(s, other, 50*time.Millisecond)
		defer wait()
		ft := &asyncT{}
		start := time.Now()
		_, ok := testkit.ExactlyOne(ft, s, testkit.KindFor("ticket.opened", "D-1"), 200*time.Millisecond, testkit.FromSession("s-1"))
		assert.False(t, ok, "another session's ticket is not this session's")
		assert.Equal(t, 200*time.Millisecond+nudge, time.Since(start))
		assert.Equal(t, `testkit.ExactlyOne: want exactly one ticket.opened D-1 from session "s-1" within 200ms (virtual time); `+
			`saw none; 0 other events in scope; left out #1 ticket.opened D-1 queue="disputes" session="s-2" at +50ms: session "s-2", want "s-1"`, ft.msg())

		// The same stream, asked for s-2, has its one ticket.
		ft2 := &asyncT{}
		_, ok = testkit.ExactlyOne(ft2, s, testkit.KindFor("ticket.opened", "D-1"), 200*time.Millisecond, testkit.FromSession("s-2"))
		assert.True(t, ok, ft2.msg())
	})
}

func TestExactlyOneWindowScope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testkit.NewStream()
		s.Emit(opened) // the previous turn's ticket
		time.Sleep(10 * time.Millisecond)
		turn := time.Now()
		wait := emitAfter(s, opened, 50*time.Millisecond)
		defer wait()

		ft := &asyncT{}
		_, ok := testkit.ExactlyOne(ft, s, testkit.Kind("ticket.opened"), time.Second, testkit.Since(turn))
		assert.True(t, ok, "the earlier ticket is outside this turn: %s", ft.msg())

		ft2 := &asyncT{}
		_, ok = testkit.ExactlyOne(ft2, s, testkit.Kind("ticket.opened"), time.Second)
		assert.False(t, ok, "without the window both count")
		assert.Contains(t, ft2.msg(), "saw 2")

		ft3 := &asyncT{}
		_, ok = testkit.ExactlyOne(ft3, s, testkit.Kind("ticket.closed"), 10*time.Millisecond, testkit.Since(turn))
		assert.False(t, ok)
		assert.Contains(t, ft3.msg(), "want exactly one ticket.closed since the turn started within 10ms (virtual time); saw none; 1 other events in scope: #2 ticket.opened")
	})
}

func TestQuietFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testkit.NewStream()
		wait := emitAfter(s, opened, 50*time.Millisecond, 120*time.Millisecond)
		defer wait()
		ft := &asyncT{}
		start := time.Now()
		ok := testkit.Quiet(ft, s, 200*time.Millisecond, time.Second)
		require.True(t, ok, ft.msg())
		assert.Equal(t, 320*time.Millisecond+nudge, time.Since(start), "quiet counts from the last new event")

		// Nothing new: quiet right after quietFor.
		start = time.Now()
		assert.True(t, testkit.Quiet(ft, s, 200*time.Millisecond, time.Second))
		assert.Equal(t, 200*time.Millisecond+nudge, time.Since(start))
		assert.False(t, ft.failed())
	})
}

func TestQuietForFailsWhenEventsKeepComing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testkit.NewStream()
		delays := make([]time.Duration, 20)
		for i := range delays {
			delays[i] = time.Duration(i+1) * 100 * time.Millisecond
		}
		wait := emitAfter(s, opened, delays...)
		defer wait()
		ft := &asyncT{}
		start := time.Now()
		ok := testkit.Quiet(ft, s, 200*time.Millisecond, time.Second)
		assert.False(t, ok)
		assert.Equal(t, time.Second+nudge, time.Since(start))
		assert.Equal(t, `testkit.Quiet: want no new event for 200ms within 1s (virtual time); saw 10 new events, `+
			`the last 0s before the deadline: #10 ticket.opened D-1 queue="disputes" session="s-1" at +1s`, ft.msg())

		// Another session's chatter does not break s-2's quiet.
		ft2 := &asyncT{}
		assert.True(t, testkit.Quiet(ft2, s, 200*time.Millisecond, time.Second, testkit.FromSession("s-2")), ft2.msg())
	})
}

func TestEventually(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testkit.NewStream()
		wait := emitAfter(s, opened, 50*time.Millisecond)
		defer wait()
		cond := func() error {
			if n := len(s.Events()); n != 1 {
				return fmt.Errorf("%d tickets, want 1", n)
			}
			return nil
		}
		ft := &asyncT{}
		start := time.Now()
		require.True(t, testkit.Eventually(ft, cond, time.Second), ft.msg())
		assert.Equal(t, 50*time.Millisecond+nudge, time.Since(start))

		start = time.Now()
		ok := testkit.Eventually(ft, func() error { return errors.New("0 tickets closed, want 1") }, 300*time.Millisecond)
		assert.False(t, ok)
		assert.Equal(t, 300*time.Millisecond+nudge, time.Since(start))
		assert.Equal(t, "testkit.Eventually: want the condition to hold within 300ms (virtual time); still false after 300ms: 0 tickets closed, want 1", ft.msg())

		ft = &asyncT{}
		testkit.Eventually(ft, func() error { return errors.New("0 tickets closed") }, time.Millisecond, testkit.Expecting("a closed ticket"))
		assert.Equal(t, "testkit.Eventually: want a closed ticket within 1ms (virtual time); still false after 1ms: 0 tickets closed", ft.msg())
	})
}

func TestEventuallyWakeOn(t *testing.T) {
	// In real time: woken by each event, never by a poll.
	s := testkit.NewStream()
	wait := emitAfter(s, opened, 20*time.Millisecond, 40*time.Millisecond)
	defer wait()
	looks := 0
	cond := func() error {
		looks++
		if n := len(s.Events()); n < 2 {
			return fmt.Errorf("%d events, want 2", n)
		}
		return nil
	}
	ft := &asyncT{}
	start := time.Now()
	require.True(t, testkit.Eventually(ft, cond, time.Minute, testkit.WakeOn(s)), ft.msg())
	// Once at the start and at most once per event: no polling (5ms
	// polls would look about 8 times). Under load both events may come
	// before the first look.
	assert.LessOrEqual(t, looks, 3)
	// Woken by the events, not by the deadline (a functional check with
	// a wide margin, not a timing one).
	assert.Less(t, time.Since(start), 30*time.Second)
	assert.Panics(t, func() { testkit.Eventually(ft, cond, time.Second, testkit.WakeOn(&polled{})) })
}

func TestStreamSharedAcrossABubble(t *testing.T) {
	// A real-time waiter woken by an Emit from inside a bubble, and a
	// bubble's waiter fed from outside: neither crashes (closing a
	// bubble's channel from outside it is a fatal error, so waiters in a
	// bubble never subscribe).
	s := testkit.NewStream()
	ft := &asyncT{}
	var wg sync.WaitGroup
	var ok bool
	wg.Go(func() {
		_, ok = testkit.ExactlyOne(ft, s, testkit.Kind("ticket.opened"), 10*time.Second, testkit.Settle(time.Millisecond))
	})
	time.Sleep(20 * time.Millisecond) // let it subscribe
	synctest.Test(t, func(t *testing.T) { s.Emit(opened) })
	wg.Wait()
	assert.True(t, ok, ft.msg())

	s2 := testkit.NewStream()
	wait := emitAfter(s2, opened, 5*time.Millisecond) // real time, outside
	defer wait()
	synctest.Test(t, func(t *testing.T) {
		ft := &asyncT{}
		ok := testkit.Eventually(ft, func() error {
			if len(s2.Events()) == 0 {
				return errors.New("no event")
			}
			return nil
		}, 100*time.Hour, testkit.WakeOn(s2))
		assert.True(t, ok, ft.msg())
	})
}

// polled is a Source that cannot wake waiters and does not stamp its
// events: the assertions poll it and time its events by when they saw them.
type polled struct {
	mu     sync.Mutex
	events []testkit.Event
}

func (p *polled) Events() []testkit.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]testkit.Event(nil), p.events...)
}

func (p *polled) add(e testkit.Event) { p.mu.Lock(); p.events = append(p.events, e); p.mu.Unlock() }

func TestPolledSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &polled{}
		var wg sync.WaitGroup
		wg.Go(func() {
			time.Sleep(50 * time.Millisecond)
			p.add(opened)
			time.Sleep(70 * time.Millisecond)
			p.add(opened)
		})
		defer wg.Wait()
		ft := &asyncT{}
		start := time.Now()
		_, ok := testkit.ExactlyOne(ft, p, testkit.Kind("ticket.opened"), time.Second, testkit.Settle(30*time.Millisecond))
		require.True(t, ok, ft.msg())
		assert.Equal(t, 80*time.Millisecond+nudge, time.Since(start), "settle counts from when the poll saw it")

		start = time.Now()
		require.True(t, testkit.Quiet(ft, p, 200*time.Millisecond, time.Second), ft.msg())
		assert.Equal(t, 240*time.Millisecond+nudge, time.Since(start), "quiet counts from when the poll saw the last event")

		_, ok = testkit.ExactlyOne(ft, p, testkit.Kind("ticket.opened"), time.Second)
		assert.False(t, ok)
		assert.Contains(t, ft.msg(), "saw 2 by +0s: ticket.opened D-1 queue=\"disputes\" session=\"s-1\", ticket.opened D-1")
	})
}

// The same assertions outside a bubble poll the wall clock: short windows
// here, and outcomes only (no timing is asserted in real time).
func TestRealTime(t *testing.T) {
	s := testkit.NewStream()
	wait := emitAfter(s, opened, 5*time.Millisecond)
	ft := &asyncT{}
	_, ok := testkit.ExactlyOne(ft, s, testkit.Kind("ticket.opened"), 2*time.Second, testkit.Settle(20*time.Millisecond))
	assert.True(t, ok, ft.msg())
	wait()
	assert.True(t, testkit.Quiet(ft, s, 20*time.Millisecond, 2*time.Second))
	assert.False(t, ft.failed(), ft.msg())

	wait = emitAfter(s, opened, 5*time.Millisecond)
	defer wait()
	_, ok = testkit.ExactlyOne(ft, s, testkit.Kind("ticket.opened"), 2*time.Second)
	assert.False(t, ok)
	assert.Contains(t, ft.msg(), "within 2s (real time); saw 2 by +")
}

func TestWithClockForcesTheMessage(t *testing.T) {
	ft := &asyncT{}
	testkit.Eventually(ft, func() error { return errors.New("no") }, time.Millisecond, testkit.WithClock(testkit.VirtualClock))
	assert.Contains(t, ft.msg(), "(virtual time)")
}

func TestMisuse(t *testing.T) {
	ft := &asyncT{}
	s := testkit.NewStream()
	assert.PanicsWithValue(t, "testkit: Quiet(1s, 10ms): want 0 < quietFor <= maxWait", func() {
		testkit.Quiet(ft, s, time.Second, 10*time.Millisecond)
	})
	assert.Panics(t, func() { testkit.ExactlyOne(ft, nil, testkit.Kind("x"), time.Second) })
	assert.Panics(t, func() { testkit.Eventually(ft, nil, time.Second) })
}

// benchAssertions are the assertions scripts/bench/async.sh times, each
// against a worker that emits one event 50ms after the scenario starts.
var benchAssertions = []struct {
	name string
	run  func(tb testkit.TB, s *testkit.Stream) bool
}{
	{"Eventually(1s)", func(tb testkit.TB, s *testkit.Stream) bool {
		return testkit.Eventually(tb, func() error {
			if len(s.Events()) == 0 {
				return errors.New("no event yet")
			}
			return nil
		}, time.Second)
	}},
	{"ExactlyOne(200ms)", func(tb testkit.TB, s *testkit.Stream) bool {
		_, ok := testkit.ExactlyOne(tb, s, testkit.KindFor("ticket.opened", "D-1"), 200*time.Millisecond, testkit.OnQueue("disputes"))
		return ok
	}},
	{"Quiet(200ms,1s)", func(tb testkit.TB, s *testkit.Stream) bool {
		return testkit.Quiet(tb, s, 200*time.Millisecond, time.Second)
	}},
	{"scenario(all-three)", func(tb testkit.TB, s *testkit.Stream) bool {
		if !testkit.Eventually(tb, func() error {
			if len(s.Events()) == 0 {
				return errors.New("no event yet")
			}
			return nil
		}, time.Second) {
			return false
		}
		if _, ok := testkit.ExactlyOne(tb, s, testkit.KindFor("ticket.opened", "D-1"), 200*time.Millisecond, testkit.OnQueue("disputes")); !ok {
			return false
		}
		return testkit.Quiet(tb, s, 200*time.Millisecond, time.Second)
	}},
}

func benchScenario(tb testkit.TB, run func(testkit.TB, *testkit.Stream) bool) bool {
	s := testkit.NewStream()
	wait := emitAfter(s, opened, 50*time.Millisecond)
	defer wait()
	return run(tb, s)
}

// TestAsyncBenchmark times each async assertion on virtual time (inside a
// synctest bubble) and in real time, for scripts/bench/async.sh; it is
// skipped unless AGENTIDEM_ASYNC_BENCH is set. It is a Test that runs
// testing.Benchmark, not a Benchmark function, because synctest.Test needs
// a *testing.T: a *testing.B cannot own a bubble. It prints standard
// benchmark lines and fails only if an assertion fails, never on timing.
func TestAsyncBenchmark(t *testing.T) {
	if os.Getenv("AGENTIDEM_ASYNC_BENCH") == "" {
		t.Skip("set AGENTIDEM_ASYNC_BENCH=1 (scripts/bench/async.sh) to time the async assertions")
	}
	for _, a := range benchAssertions {
		virtual := testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				synctest.Test(t, func(t *testing.T) {
					ft := &asyncT{}
					if !benchScenario(ft, a.run) {
						t.Errorf("%s failed on virtual time: %s", a.name, ft.msg())
					}
				})
			}
		})
		real := testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				ft := &asyncT{}
				if !benchScenario(ft, a.run) {
					b.Errorf("%s failed in real time: %s", a.name, ft.msg())
				}
			}
		})
		fmt.Printf("BenchmarkAsync/%s/virtual\t%d\t%d ns/op\n", a.name, virtual.N, virtual.NsPerOp())
		fmt.Printf("BenchmarkAsync/%s/real\t%d\t%d ns/op\n", a.name, real.N, real.NsPerOp())
	}
}
