package testkit_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/realworld"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"
)

// These tests run agents written with ordinary Go (channel semaphores,
// singleflight, tools without a context, contexts that are not the
// agent's, goroutines, timers) through the whole suite. Each must get its
// verdict in bounded time: none may crash the binary or hang.

// deskWorld gives every scenario a fresh desk and guards it.
type deskWorld struct{ desk *realworld.Desk }

func (w *deskWorld) options(extra ...testkit.Option) []testkit.Option {
	return append([]testkit.Option{
		testkit.Setup(func(context.Context) error { w.desk = realworld.NewDesk(); return nil }),
		testkit.Invariant("one ticket per key", func(*runtime.Trace) error {
			if n := w.desk.Opened(); n > 1 {
				return errors.New("ticket opened " + string(rune('0'+n)) + " times")
			}
			return nil
		}),
		testkit.StallTimeout(3 * time.Second),
	}, extra...)
}

// codes lists the finding codes of every scenario, and notes.
func codes(rep *runtime.Report) map[string][]string {
	out := map[string][]string{}
	for _, r := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		if r == nil {
			continue
		}
		for _, f := range r.Findings {
			out[r.Scenario] = append(out[r.Scenario], f.Code)
		}
	}
	return out
}

func noStall(t *testing.T, rep *runtime.Report) {
	t.Helper()
	for _, r := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		for _, f := range r.Findings {
			assert.NotEqual(t, runtime.CodeStalled, f.Code, "%s: %s", r.Scenario, f.Message)
		}
	}
}

func notesOf(rep *runtime.Report, scenario string) string {
	for _, r := range rep.Results {
		if r.Scenario == scenario {
			return strings.Join(r.Trace.Notes, "\n")
		}
	}
	return ""
}

// A channel semaphore held across check and create serializes the two
// deliveries of a concurrent duplicate delivery behind the harness's back.
// Lockstep sees the second delivery blocked outside any gate and lets the
// first go on alone: a verdict, no hang.
func TestChannelSemaphoreSerializesDeliveriesWithoutHang(t *testing.T) {
	sem := make(chan struct{}, 1) // made outside every scenario, as package-level ones are
	w := &deskWorld{}
	agent := func(ctx context.Context) error {
		sem <- struct{}{}
		defer func() { <-sem }()
		found, err := w.desk.FindTraced(ctx, "D-1")
		if err != nil || found {
			return err
		}
		_, err = w.desk.OpenTraced(ctx, "D-1")
		return err
	}
	rep := testkit.Run(t, agent, w.options(testkit.NoSummary())...)
	noStall(t, rep)
	assert.Contains(t, notesOf(rep, runtime.ScenarioDuplicateConcurrent), "went on alone")
	assert.Contains(t, notesOf(rep, runtime.ScenarioDuplicateConcurrent), "blocked on a channel send")
	assert.NotContains(t, codes(rep)[runtime.ScenarioDuplicateConcurrent], runtime.CodeDuplicateWrite,
		"serialized, the second delivery finds the ticket")
	// The lost acknowledgement is still a real duplicate: the agent does
	// not retry, but the redelivery after a crash re-checks and finds it.
	assert.NotContains(t, codes(rep)["crash_restart/openTicket#1"], runtime.CodeDuplicateWrite)
}

// singleflight joins the second delivery to the first one's in-flight
// create: the joined delivery waits inside singleflight, outside any gate.
func TestSingleflightDeliveriesDoNotHang(t *testing.T) {
	var g singleflight.Group
	w := &deskWorld{}
	agent := func(ctx context.Context) error {
		_, err, _ := g.Do("D-1", func() (any, error) {
			found, err := w.desk.FindTraced(ctx, "D-1")
			if err != nil || found {
				return nil, err
			}
			return w.desk.OpenTraced(ctx, "D-1")
		})
		return err
	}
	rep := testkit.TestAgent(t, agent, w.options(testkit.NoSummary())...)
	noStall(t, rep)
	assert.True(t, rep.Safe)
}

// Tools without a context: calls are attributed to their delivery by the
// goroutine that made them, so lockstep works and check-then-create races
// show (the buggy agent FAILS), while a serialized twin passes.
func TestContextlessToolsUnderConcurrentDelivery(t *testing.T) {
	w := &deskWorld{}
	racy := func(ctx context.Context) error {
		found, err := w.desk.FindNoCtxTraced("D-1")
		if err != nil || found {
			return err
		}
		_, err = w.desk.OpenNoCtxTraced("D-1") //agentidem:ignore the seeded bug of this test: a check-then-create the suite must catch
		return err
	}
	ft := &fakeT{name: "TestContextless"}
	rep := testkit.TestAgent(ft, racy, w.options()...)
	assert.True(t, ft.failed(), "the racy agent fails")
	assert.Contains(t, codes(rep)[runtime.ScenarioDuplicateConcurrent], runtime.CodeDuplicateWrite)
	noStall(t, rep)

	var mu sync.Mutex
	serialized := func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		return racy(ctx)
	}
	rep = testkit.TestAgent(t, serialized, w.options(testkit.NoSummary())...)
	assert.True(t, rep.Safe)
	noStall(t, rep)
}

// A retrying agent that passes context.Background() instead of its own:
// the calls are attributed by goroutine (the duplicate is caught, not
// "SAFE, 0 calls") and the detached context is reported at its call site.
func TestDetachedContextIsAttributedAndReported(t *testing.T) {
	w := &deskWorld{}
	agent := func(ctx context.Context) error {
		var err error
		for i := 0; i < 3; i++ {
			if _, err = w.desk.OpenTraced(context.Background(), "D-1"); err == nil {
				return nil
			}
		}
		return err
	}
	ft := &fakeT{name: "TestDetached"}
	rep := testkit.TestAgent(ft, agent, w.options()...)
	assert.True(t, ft.failed())
	require.NotEmpty(t, rep.Baseline.Trace.Ops, "the baseline saw the call")
	assert.Contains(t, codes(rep)["lost_acknowledgement/openTicket#1"], runtime.CodeDuplicateWrite)
	require.Contains(t, codes(rep)[runtime.ScenarioBaseline], runtime.CodeContextDetached)
	for _, f := range rep.Baseline.Findings {
		if f.Code == runtime.CodeContextDetached {
			assert.Equal(t, runtime.SeverityWarning, f.Severity)
			assert.Contains(t, f.Message, "realworld_test.go:")
		}
	}
}

// Two parallel tests whose tools take no context: each run gets its own
// calls (by goroutine ancestry), and each catches its duplicate.
func TestParallelTestsWithContextlessTools(t *testing.T) {
	for _, name := range []string{"first", "second"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := &deskWorld{}
			agent := func(ctx context.Context) error {
				var err error
				for i := 0; i < 3; i++ {
					if _, err = w.desk.OpenNoCtxTraced("D-" + name); err == nil {
						return nil
					}
				}
				return err
			}
			ft := &fakeT{name: "TestParallel/" + name}
			rep := testkit.TestAgent(ft, agent, w.options()...)
			assert.True(t, ft.failed())
			require.Len(t, rep.Baseline.Trace.Ops, 1)
			assert.Equal(t, `"D-`+name+`"`, rep.Baseline.Trace.Ops[0].Identity)
			assert.Contains(t, codes(rep)["lost_acknowledgement/openTicketNoCtx#1"], runtime.CodeDuplicateWrite)
		})
	}
}

// An identity JSON cannot encode makes the call invisible to duplicate
// detection: that is an error finding, never a silent pass.
func TestUnencodableIdentityIsAFinding(t *testing.T) {
	for name, call := range map[string]func(context.Context) error{
		"+Inf":    func(ctx context.Context) error { return realworld.RecordTraced(ctx, math.Inf(1)) },
		"complex": func(ctx context.Context) error { return realworld.RecordTraced(ctx, complex(1, 2)) },
	} {
		t.Run(name, func(t *testing.T) {
			retrying := func(ctx context.Context) error {
				var err error
				for i := 0; i < 3; i++ {
					if err = call(ctx); err == nil {
						return nil
					}
				}
				return err
			}
			ft := &fakeT{name: "TestUnencodable"}
			rep := testkit.TestAgent(ft, retrying)
			assert.True(t, ft.failed())
			assert.False(t, rep.Safe)
			require.Contains(t, codes(rep)[runtime.ScenarioBaseline], runtime.CodeIdentityUnencodable)
			for _, f := range rep.Baseline.Findings {
				if f.Code == runtime.CodeIdentityUnencodable {
					assert.Contains(t, f.Message, "record")
					assert.Contains(t, f.Message, "of type")
				}
			}
		})
	}
	// The encodable twin has no such finding (its retries are judged as
	// duplicates like any other write's).
	rep := testkit.Run(&fakeT{name: "TestEncodable"}, func(ctx context.Context) error { return realworld.RecordTraced(ctx, 1.5) })
	assert.NotContains(t, codes(rep)[runtime.ScenarioBaseline], runtime.CodeIdentityUnencodable)
	assert.Contains(t, codes(rep)[runtime.ScenarioDuplicateSeq], runtime.CodeDuplicateWrite, "visible to duplicate detection")
}

// Results JSON cannot encode are recorded with a fallback, and the report
// is written and valid.
func TestUnencodableResultsStillWriteTheReport(t *testing.T) {
	agent := func(ctx context.Context) error {
		for _, kind := range []string{"chan", "nan", "response"} {
			if _, err := realworld.WeirdTraced(ctx, kind); err != nil {
				return err
			}
		}
		return nil
	}
	rep := testkit.TestAgent(t, agent, testkit.NoSummary())
	var buf bytes.Buffer
	require.NoError(t, rep.WriteJSON(&buf))
	require.NoError(t, reportschema.Validate(rep))
	ops := rep.Baseline.Trace.Ops
	require.Len(t, ops, 3)
	assert.Contains(t, ops[0].Result, "<chan int: not JSON")
	assert.Contains(t, ops[1].Result, "<float64: not JSON")
	assert.Contains(t, ops[2].Result, "<*http.Response: not JSON")
}

// Panics in Setup, Teardown, Invariant and Outcome fail their scenario;
// the binary survives and the other scenarios run.
func TestPanicsInHooksFailTheirScenario(t *testing.T) {
	w := &deskWorld{}
	agent := func(ctx context.Context) error {
		_, err := w.desk.OpenTraced(ctx, "D-1")
		return err
	}
	setups := 0
	ft := &fakeT{name: "TestPanics"}
	rep := testkit.TestAgent(ft, agent,
		testkit.Setup(func(context.Context) error {
			setups++
			if setups == 3 {
				panic("setup blew up")
			}
			w.desk = realworld.NewDesk()
			return nil
		}),
		testkit.Teardown(func(context.Context) error {
			if setups == 4 {
				panic("teardown blew up")
			}
			return nil
		}),
		testkit.Invariant("explodes", func(*runtime.Trace) error {
			if setups == 5 {
				panic("invariant blew up")
			}
			return nil
		}),
	)
	assert.True(t, ft.failed())
	all := strings.Join(ft.errors, "\n")
	assert.Contains(t, all, "Setup panicked: setup blew up")
	assert.Contains(t, all, "Teardown panicked: teardown blew up")
	assert.Contains(t, all, "invariant panicked: invariant blew up")
	assert.Greater(t, len(rep.Results), 5, "the other scenarios ran")

	// Outcome runs after each schedule of a parallel agent.
	par := func(ctx context.Context) error {
		var g errgroup.Group
		g.Go(func() error { _, err := w.desk.FindTraced(ctx, "D-1"); return err })
		g.Go(func() error { _, err := w.desk.FindTraced(ctx, "D-2"); return err })
		return g.Wait()
	}
	ft = &fakeT{name: "TestOutcomePanics"}
	rep = testkit.Run(ft, par, testkit.Setup(func(context.Context) error { w.desk = realworld.NewDesk(); return nil }),
		testkit.Outcome(func() any { panic("outcome blew up") }))
	var outcomes []string
	for _, r := range rep.Results {
		if r.Kind == runtime.ScenarioInterleaving {
			outcomes = append(outcomes, r.Outcome)
		}
	}
	require.NotEmpty(t, outcomes)
	assert.Contains(t, outcomes[0], "outcome panicked: outcome blew up")
}

// An agent that never returns (blocked, paying no attention to its
// context) fails its scenario after the stall timeout, naming where it
// is blocked; the test goes on.
func TestAgentThatNeverReturnsIsStalled(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	w := &deskWorld{}
	agent := func(ctx context.Context) error {
		if _, err := w.desk.OpenTraced(ctx, "D-1"); err != nil {
			return err
		}
		<-block // never closed while the suite runs
		return nil
	}
	ft := &fakeT{name: "TestNeverReturns"}
	start := time.Now()
	rep := testkit.TestAgent(ft, agent, w.options(testkit.StallTimeout(200*time.Millisecond))...)
	assert.Less(t, time.Since(start), 5*time.Second, "bounded")
	assert.True(t, ft.failed())
	require.Contains(t, codes(rep)[runtime.ScenarioBaseline], runtime.CodeStalled)
	msg := rep.Baseline.Findings[0].Message
	assert.Contains(t, msg, "no progress for 200ms")
	assert.Contains(t, msg, "delivery 1")
	assert.Contains(t, msg, "blocked on a channel receive at realworld_test.go:")
}

// A tool stuck in its body: the stall names the goroutine and the line.
func TestToolStuckInItsBodyIsStalled(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	w := &deskWorld{}
	agent := func(ctx context.Context) error {
		var g errgroup.Group
		g.Go(func() error { return realworld.WaitTraced(ctx, "w-1", release) })
		g.Go(func() error { _, err := w.desk.OpenTraced(ctx, "D-1"); return err })
		return g.Wait()
	}
	ft := &fakeT{name: "TestStuckTool"}
	rep := testkit.TestAgent(ft, agent, w.options(testkit.StallTimeout(200*time.Millisecond))...)
	assert.True(t, ft.failed())
	require.Contains(t, codes(rep)[runtime.ScenarioBaseline], runtime.CodeStalled)
	msg := rep.Baseline.Findings[0].Message
	assert.Contains(t, msg, "is blocked on a channel receive at realworld.go:")
}

// One delivery of a concurrent delivery polls for something that never
// comes (busy, not blocked) while the other waits at its gate. The waiting
// delivery goes on alone once the poller has been busy outside any gate
// for the lockstep's aloneAfter (half this stall bound: a lock polled with
// sleeps looks the same), and the trace says so; the poller never ends,
// the stall names it, and the scenario fails alone.
//
// Both are bounds on real time, and the lockstep sees the poller only
// between its looks at the goroutines (a stack dump each, slow under
// -race on a busy machine): with a stall bound of 300 ms it had 150 ms to
// let the waiting delivery go on alone before the stall, and in 1 of 80
// runs beside CPU burners the stall came first and the note was missing.
// A bound of 1 s leaves it 500 ms.
func TestConcurrentDeliveryStallNamesBothSides(t *testing.T) {
	var active, waiting atomic.Int32
	var never atomic.Bool
	defer never.Store(true)
	w := &deskWorld{}
	agent := func(ctx context.Context) error {
		if active.Add(1) > 1 { // the second of two deliveries at once
			waiting.Add(1)
			for !never.Load() {
				time.Sleep(time.Millisecond)
			}
		}
		defer active.Add(-1)
		_, err := w.desk.OpenTraced(ctx, "D-1")
		return err
	}
	ft := &fakeT{name: "TestLockstepStall"}
	rep := testkit.Run(ft, agent, w.options(testkit.StallTimeout(time.Second))...)
	require.Contains(t, codes(rep)[runtime.ScenarioDuplicateConcurrent], runtime.CodeStalled)
	var msg, notes string
	for _, r := range rep.Results {
		if r.Scenario == runtime.ScenarioDuplicateConcurrent {
			msg = r.Findings[0].Message
			notes = strings.Join(r.Trace.Notes, "\n")
		}
	}
	assert.Regexp(t, `delivery \d \(goroutine \d+\) is (asleep|running) at realworld_test.go:\d+`, msg)
	assert.Regexp(t, `delivery \d went on alone at its call 1 \(openTicket\): the other delivery was still busy outside any gate after 500ms`, notes)
	assert.Contains(t, msg, "raise the bound with StallTimeout if the agent is only slow", "a poller asleep may be slow")
	assert.Contains(t, codes(rep)[runtime.ScenarioDuplicateSeq], runtime.CodeDuplicateWrite, "the scenarios after it ran")
}

// The everyday kit of a parallel agent: errgroup, WaitGroup, sync.Cond, a
// stagger with time.Sleep, context.WithTimeout. Same verdict on every run.
func TestOrdinaryConcurrencyGetsTheSameVerdictEveryRun(t *testing.T) {
	w := &deskWorld{}
	agent := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var (
			mu    sync.Mutex
			cond  = sync.NewCond(&mu)
			ready int
		)
		var g errgroup.Group
		for i, key := range []string{"D-1", "D-2"} {
			g.Go(func() error {
				time.Sleep(time.Duration(i) * time.Millisecond) // a stagger
				mu.Lock()
				ready++
				cond.Broadcast()
				for ready < 2 {
					cond.Wait()
				}
				mu.Unlock()
				_, err := w.desk.FindTraced(ctx, key)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		var wg sync.WaitGroup
		wg.Add(1)
		var err error
		go func() {
			defer wg.Done()
			_, err = w.desk.OpenTraced(ctx, "D-1")
		}()
		wg.Wait()
		return err
	}
	sets := map[string]bool{}
	for i := 0; i < 5; i++ {
		rep := testkit.Run(&fakeT{name: "TestOrdinary"}, agent, w.options()...)
		noStall(t, rep)
		var keys []string
		for _, f := range rep.Findings {
			keys = append(keys, f.Code+" "+f.Scenario)
		}
		sort.Strings(keys)
		sets[strings.Join(keys, "\n")] = true
	}
	assert.Len(t, sets, 1, "%v", sets)
}

// An agent that calls the tools themselves rather than their wrappers is
// tested for nothing: nothing_traced fails it; the wrapped twin passes.
func TestNothingTracedIsAnError(t *testing.T) {
	w := &deskWorld{}
	ft := &fakeT{name: "TestNothingTraced"}
	rep := testkit.TestAgent(ft, func(ctx context.Context) error {
		_, err := w.desk.Open(ctx, "D-1") //agentidem:ignore the seeded bug of this test: the tool called directly
		return err
	}, w.options()...)
	assert.True(t, ft.failed())
	assert.False(t, rep.Safe)
	assert.Equal(t, []string{runtime.CodeNothingTraced}, codes(rep)[runtime.ScenarioBaseline])
	assert.Empty(t, rep.Results, "nothing to plan from")

	// An agent that failed before its first call (its service was
	// down): the finding says so, next to what else may be wrong.
	ft = &fakeT{name: "TestNothingTraced"}
	rep = testkit.TestAgent(ft, func(ctx context.Context) error {
		return errors.New("dial tcp 127.0.0.1:8080: connect: connection refused")
	}, w.options()...)
	require.Len(t, rep.Baseline.Findings, 1)
	assert.Contains(t, rep.Baseline.Findings[0].Message, "the agent returned an error before any call: delivery 1: dial tcp 127.0.0.1:8080: connect: connection refused")
	assert.Contains(t, rep.Baseline.Findings[0].Message, "adapter's middleware")

	var mu sync.Mutex
	rep = testkit.TestAgent(t, func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		found, err := w.desk.FindTraced(ctx, "D-1")
		if err != nil || found {
			return err
		}
		_, err = w.desk.OpenTraced(ctx, "D-1")
		return err
	}, w.options(testkit.NoSummary())...)
	assert.True(t, rep.Safe)
}

// A client library's background reader (a gRPC transport, a pub/sub
// subscription) sits in network I/O for as long as its connection lives,
// waiting for messages nobody here waits for. It must not hold the
// schedule up. The readers here (the server's, and Setup's standing for
// the library's) run the test's own code, which the scheduler cannot tell
// from the agent's code reading a reply: each counts as busy for a second,
// once in the suite, and two of them, first seen one after the other, must
// not add up to the stall bound. A library's own loop, with no frame of
// the user's code, is quiet from the start (runtime's
// TestALibrarysReaderLoopIsNotWaitedFor).
func TestBackgroundNetworkReaderDoesNotStall(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	w := &deskWorld{}
	agent := func(ctx context.Context) error {
		var g errgroup.Group
		g.Go(func() error { _, err := w.desk.FindTraced(ctx, "D-1"); return err })
		g.Go(func() error { _, err := w.desk.FindTraced(ctx, "D-2"); return err })
		return g.Wait()
	}
	rep := testkit.TestAgent(t, agent, w.options(
		testkit.StallTimeout(2*time.Second),
		testkit.NoSummary(),
		testkit.Setup(func(context.Context) error {
			w.desk = realworld.NewDesk()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				return err
			}
			conns = append(conns, c)
			go func() { _, _ = io.Copy(io.Discard, c) }() // the library's reader loop
			return nil
		}))...)
	noStall(t, rep)
	assert.True(t, rep.Safe)
}

// An agent that notifies a webhook from a goroutine it does not wait for
// (fire and forget) makes the notification after its invocation returned:
// no scenario traced it, so no fault or redelivery of it was tested. The
// scenario whose goroutine made it is inconclusive, and the test's log
// says why, with the call site; the agent that waits for its goroutine is
// tested whole and safe.
//
// Each scenario's goroutine is held until the next scenario's Setup, so
// that its call lands after its own run ended on every run of this test.
func TestFireAndForgetNotificationIsReported(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	for _, waits := range []bool{false, true} {
		t.Run(map[bool]string{false: "forgets", true: "waits"}[waits], func(t *testing.T) {
			w := &deskWorld{}
			var (
				mu       sync.Mutex
				release  = make(chan struct{})
				notified sync.WaitGroup
			)
			agent := func(ctx context.Context) error {
				found, err := w.desk.FindTraced(ctx, "D-1")
				if err != nil || found {
					return err
				}
				mu.Lock()
				held := release
				mu.Unlock()
				// Its own wait group: two deliveries at once (concurrent
				// delivery) must not Add to one another's while it waits.
				var mine sync.WaitGroup
				mine.Add(1)
				notified.Add(1)
				go func() {
					defer notified.Done()
					defer mine.Done()
					if !waits {
						<-held
					}
					realworld.NotifyTraced(ctx, srv.URL, "D-1") //nolint:errcheck // fire and forget
				}()
				if waits {
					mine.Wait()
				}
				return nil
			}
			ft := &fakeT{name: "TestNotify"}
			rep := testkit.TestAgent(ft, agent, w.options(testkit.Setup(func(context.Context) error {
				w.desk = realworld.NewDesk()
				mu.Lock()
				close(release) // the scenario before this one has ended
				release = make(chan struct{})
				mu.Unlock()
				notified.Wait()
				return nil
			}))...)
			mu.Lock()
			close(release) // the last scenario's goroutines, after the report
			mu.Unlock()
			notified.Wait()
			assert.False(t, ft.failed(), "a warning fails nothing: %v", ft.errors)
			var late []string
			for _, r := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
				for _, f := range r.Findings {
					if f.Code == runtime.CodeGoroutineLeak {
						late = append(late, r.Scenario)
						assert.True(t, r.Inconclusive, r.Scenario)
						assert.Equal(t, []string{"notify"}, f.Ops)
						assert.Contains(t, f.Message, "realworld_test.go:")
						if r.Scenario == runtime.ScenarioDuplicateSeq {
							// Both deliveries left theirs.
							assert.True(t, strings.HasPrefix(f.Message, "2 tool calls (notify, at realworld_test.go:"), f.Message)
						}
					}
				}
			}
			logs := strings.Join(ft.logs, "\n")
			if waits {
				assert.Empty(t, late)
				assert.Zero(t, rep.InconclusiveCount)
				assert.True(t, rep.Safe, "%v", rep.Findings)
				return
			}
			// Every scenario but the last left a notification behind; the
			// last one's came after the report and is in no scenario's.
			assert.Equal(t, []string{runtime.ScenarioBaseline, runtime.ScenarioDuplicateSeq}, late)
			// Logged in full once, as every problem is; the summary names
			// both scenarios.
			assert.Contains(t, logs, "warning: baseline: [goroutine_leak] a tool call (notify, at realworld_test.go:")
			assert.Contains(t, logs, "it ran as in production, untraced")
			assert.Contains(t, logs, "warning goroutine_leak notify: baseline, duplicate_delivery/sequential")
			assert.Contains(t, logs, "INCONCLUSIVE")
		})
	}
	assert.NotZero(t, posts.Load())
}

// The tool lives behind an HTTP server of the test (a fake of the service
// the agent calls, as a real agent's test has): the handler calls the
// traced tool with its request's context, and the agent waits for the HTTP
// answer. Under the baseline's gates, the handler's call waits at its gate
// while the agent waits for the answer; before, a client waiting for an
// HTTP response was never quiet, and the baseline stalled (a false
// "stalled" and "baseline_failed" after StallTimeout), with the server
// started before the test or in Setup alike. Now a call made for an HTTP
// request to this process (by the handler, or by a goroutine it started,
// as http.TimeoutHandler does) and held at a gate excuses one waiting
// client. The keep-alive connection that served the call, waiting for the
// next request, is no leak either. The retrying agent's duplicate is
// caught; the server that opens a ticket once per key has none.
func TestToolBehindTheTestsHTTPServer(t *testing.T) {
	type server struct {
		w    *deskWorld
		once bool // open a ticket once per key (the fixed sink)
		mu   sync.Mutex
	}
	handler := func(s *server) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			key := r.URL.Query().Get("key")
			if s.once {
				// The sink keeps one ticket per key: check and open
				// under its lock.
				s.mu.Lock()
				defer s.mu.Unlock()
			}
			if s.once && s.w.desk.Opened() > 0 {
				rw.WriteHeader(http.StatusOK)
				return
			}
			if _, err := s.w.desk.OpenTraced(r.Context(), key); err != nil {
				http.Error(rw, err.Error(), http.StatusBadGateway)
			}
		})
	}
	for _, c := range []struct {
		name    string
		inSetup bool
		once    bool
		timeout bool // the handler runs in a goroutine of http.TimeoutHandler's
	}{
		{"before the test", false, false, false},
		{"in Setup", true, false, false},
		{"in Setup, once per key", true, true, false},
		{"behind http.TimeoutHandler", true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &deskWorld{}
			s := &server{w: w, once: c.once}
			var srv *httptest.Server
			opts := w.options(testkit.StallTimeout(2 * time.Second))
			if c.inSetup {
				opts = append(opts, testkit.Setup(func(context.Context) error {
					w.desk = realworld.NewDesk()
					if srv != nil {
						srv.Close()
					}
					h := handler(s)
					if c.timeout {
						h = http.TimeoutHandler(h, 5*time.Second, "timeout")
					}
					srv = httptest.NewServer(h)
					return nil
				}))
			} else {
				srv = httptest.NewServer(handler(s))
			}
			defer func() { srv.Close() }()
			agent := func(ctx context.Context) error {
				var err error
				for range 3 {
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/open?key=D-1", nil)
					var resp *http.Response
					if resp, err = http.DefaultClient.Do(req); err == nil {
						resp.Body.Close()
						if resp.StatusCode == http.StatusOK {
							return nil
						}
						err = errors.New(resp.Status)
					}
				}
				return err
			}
			ft := &fakeT{name: "TestBehindHTTP"}
			rep := testkit.TestAgent(ft, agent, opts...)
			noStall(t, rep) // no scenario waited for its stall timeout
			require.Len(t, rep.Baseline.Trace.Ops, 1, "the baseline traced the handler's call")
			for _, f := range rep.Baseline.Findings {
				assert.NotEqual(t, runtime.CodeBaselineFailed, f.Code, f.Message)
				assert.NotEqual(t, runtime.CodeGoroutineLeak, f.Code, f.Message)
			}
			// Two deliveries at once: the handler's calls cannot be told
			// apart, and the refusal says why.
			for _, r := range rep.Results {
				if r.Scenario == runtime.ScenarioDuplicateConcurrent {
					require.NotEmpty(t, r.Trace.Refused)
					assert.Contains(t, r.Trace.Refused[0], "either of the 2 deliveries of this run in flight together (it serves an HTTP request to this process")
				}
			}
			dup := codes(rep)["lost_acknowledgement/openTicket#1"]
			if c.once {
				assert.NotContains(t, dup, runtime.CodeDuplicateWrite)
			} else {
				assert.Contains(t, dup, runtime.CodeDuplicateWrite)
			}
		})
	}
}

// The test's fake opens two tickets in parallel for request A (a handler
// that fans out to two stores) and one, after a short wait on a timer, for
// request B; the agent sends A and B at once. A's two held calls owe one
// answer, not two: when each excused a waiting client, B's client was
// taken for quiet while B's handler was still waiting on its timer, and
// which scenarios were planned changed from run to run (2-3 verdicts in
// 20 runs on 2c6feea). Every run plans the same scenarios and finds the
// same things.
func TestFakeThatFansOutGetsOneVerdict(t *testing.T) {
	w := &deskWorld{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var err error
		if r.URL.Query().Get("key") == "A" {
			g, ctx := errgroup.WithContext(r.Context())
			g.Go(func() error { _, err := w.desk.OpenTraced(ctx, "A1"); return err })
			g.Go(func() error { _, err := w.desk.OpenTraced(ctx, "A2"); return err })
			err = g.Wait()
		} else {
			select {
			case <-time.After(2 * time.Millisecond):
			case <-r.Context().Done():
			}
			_, err = w.desk.OpenTraced(r.Context(), "B")
		}
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
		}
	}))
	defer srv.Close()
	post := func(ctx context.Context, key string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/open?key="+key, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	agent := func(ctx context.Context) error {
		var g errgroup.Group
		g.Go(func() error { return post(ctx, "A") })
		g.Go(func() error { return post(ctx, "B") })
		return g.Wait()
	}
	verdicts := map[string]int{}
	for range 15 {
		rep := testkit.Run(&fakeT{name: "TestFanOut"}, agent, w.options(testkit.NoSummary())...)
		noStall(t, rep)
		var lines []string
		for scenario, cs := range codes(rep) {
			sort.Strings(cs)
			lines = append(lines, scenario+" "+strings.Join(cs, ","))
		}
		for _, r := range rep.Results {
			lines = append(lines, "planned "+r.Scenario)
		}
		sort.Strings(lines)
		verdicts[strings.Join(lines, "\n")]++
	}
	if len(verdicts) != 1 {
		for v, n := range verdicts {
			t.Logf("%d runs:\n%s", n, v)
		}
		t.Errorf("%d different verdicts in 15 runs of one agent", len(verdicts))
	}
}

// The same notification, from an agent whose framework runs each tool
// call in a goroutine of its own (the Anthropic SDK's tool runner): the
// tool's goroutine starts the notifier, without the agent's ctx, and
// exits. When the notification comes, nothing alive links the notifier to
// the invocation; the tool's goroutine, which made the invocation's call,
// does, and its scenario is inconclusive, not silently safe.
func TestFireAndForgetFromAToolsGoroutineIsReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	w := &deskWorld{}
	var (
		mu       sync.Mutex
		release  = make(chan struct{})
		notified sync.WaitGroup
	)
	agent := func(ctx context.Context) error {
		var err error
		tool := make(chan struct{})
		go func() { // the framework's goroutine for this tool call
			defer close(tool)
			var found bool
			if found, err = w.desk.FindTraced(ctx, "D-1"); err != nil || found {
				return
			}
			mu.Lock()
			held := release
			mu.Unlock()
			notified.Add(1)
			go func() {
				defer notified.Done()
				<-held
				realworld.NotifyTraced(context.Background(), srv.URL, "D-1") //nolint:errcheck // fire and forget
			}()
		}()
		<-tool
		return err
	}
	ft := &fakeT{name: "TestNotifyFromTool"}
	rep := testkit.TestAgent(ft, agent, w.options(testkit.Setup(func(context.Context) error {
		w.desk = realworld.NewDesk()
		mu.Lock()
		close(release) // the scenario before this one has ended
		release = make(chan struct{})
		mu.Unlock()
		notified.Wait()
		return nil
	}))...)
	mu.Lock()
	close(release)
	mu.Unlock()
	notified.Wait()
	var late []string
	for _, r := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		for _, f := range r.Findings {
			if f.Code == runtime.CodeGoroutineLeak {
				late = append(late, r.Scenario)
				assert.True(t, r.Inconclusive, r.Scenario)
				assert.Equal(t, []string{"notify"}, f.Ops)
			}
		}
	}
	assert.Equal(t, []string{runtime.ScenarioBaseline, runtime.ScenarioDuplicateSeq}, late)
}

// The agent's tool calls the help desk's HTTP service (traced: the
// client's write), whose handler, in this process, opens the ticket
// through the desk's traced tool (the sink, traced as in production). The
// handler's call cannot carry the agent's context across HTTP; it serves
// the request of the client's write in flight, and its effect is that
// write's too. Before, State credited the booking to the handler's call
// alone: no execution of the client's write was seen to change the world,
// every execution counted, and the server that opens one ticket per key
// got a duplicate_write in every retrying scenario (a false alarm). The
// server that opens a ticket per request still gets its true one.
func TestTracedSinkBehindTheTestsHTTPServer(t *testing.T) {
	for _, once := range []bool{false, true} {
		t.Run(map[bool]string{false: "a ticket per request", true: "one ticket per key"}[once], func(t *testing.T) {
			var (
				desk *realworld.Desk
				mu   sync.Mutex
			)
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				key := r.URL.Query().Get("key")
				mu.Lock()
				defer mu.Unlock()
				if once && desk.Tickets()[key] > 0 {
					return
				}
				if _, err := desk.OpenTraced(r.Context(), key); err != nil {
					http.Error(rw, err.Error(), http.StatusBadGateway)
				}
			}))
			defer srv.Close()
			agent := func(ctx context.Context) error {
				var err error
				for range 3 {
					if err = realworld.RequestTicketTraced(ctx, srv.URL, "D-1"); err == nil {
						return nil
					}
				}
				return err
			}
			rep := testkit.Run(&fakeT{name: "TestTracedSink"}, agent,
				testkit.Setup(func(context.Context) error { desk = realworld.NewDesk(); return nil }),
				testkit.State(func() any { return desk.Tickets() }),
				testkit.StallTimeout(3*time.Second))
			noStall(t, rep)
			got := codes(rep)
			for _, sc := range []string{"lost_acknowledgement/requestTicket#1", "duplicate_delivery/sequential"} {
				if once {
					assert.NotContains(t, got[sc], runtime.CodeDuplicateWrite, "%s: %v", sc, got[sc])
				} else {
					assert.Contains(t, got[sc], runtime.CodeDuplicateWrite, "%s: %v", sc, got[sc])
				}
			}
			// Two deliveries at once: the handler's call cannot be told to
			// be either's. With State the world still judges its effect,
			// in the agent's writes' windows: the scenario says what it
			// could not see and is inconclusive, not failed for what the
			// agent cannot change; the per-request server's second
			// ticket is still a duplicate.
			for _, r := range rep.Results {
				if r.Scenario != runtime.ScenarioDuplicateConcurrent {
					continue
				}
				assert.NotEmpty(t, r.Trace.Unattributed, "the handler's call was not said to be unattributable")
				assert.Empty(t, r.Trace.Refused)
				assert.True(t, r.Inconclusive)
				for _, f := range r.Findings {
					assert.False(t, f.Code == runtime.CodeContextDetached && f.Severity == runtime.SeverityError, f.Message)
				}
				if once {
					assert.NotContains(t, got[r.Scenario], runtime.CodeDuplicateWrite)
				} else {
					assert.Contains(t, got[r.Scenario], runtime.CodeDuplicateWrite)
				}
			}
		})
	}
}

// A webhook handler of this process that answers 202 and does its work in
// a goroutine of its own, with its request's context: the work's call is
// made after the handler returned, while both deliveries of
// duplicate_delivery/concurrent are in flight. Whether it was told as an
// HTTP handler's (unattributed: a warning, the scenario inconclusive) or
// refused (an error: UNSAFE) depended on whether the server's connection
// still ran the handler at that moment; a correct agent failed on 8 runs
// of 20 (red team). A goroutine that descends from a server connection of
// this process serves a request, whether or not its handler still runs.
func TestWorkAHandlerLeftRunningIsNotRefused(t *testing.T) {
	var (
		desk *realworld.Desk
		mu   sync.Mutex
		// work counts the handlers' goroutines not done: a WaitGroup
		// whose Add (a handler of the other delivery) may come while a
		// delivery waits at zero is a race.
		work pending
	)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		key := r.URL.Query().Get("key")
		ctx := context.WithoutCancel(r.Context())
		work.add()
		go func() {
			defer work.done()
			time.Sleep(2 * time.Millisecond) // after the handler returned
			mu.Lock()
			defer mu.Unlock()
			if found, _ := desk.FindTraced(ctx, key); !found {
				desk.OpenTraced(ctx, key)
			}
		}()
		rw.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	agent := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/webhook?key=D-1", nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		// The caller waits for the work (a test's fake of the sender
		// would poll for it): both deliveries are in flight while it
		// runs.
		work.wait()
		return nil
	}
	for i := range 5 {
		rep := testkit.Run(&fakeT{name: "TestHandlerWork"}, agent,
			testkit.Setup(func(context.Context) error { work.wait(); desk = realworld.NewDesk(); return nil }),
			testkit.State(func() any { return desk.Tickets() }),
			testkit.With(runtime.OnlyScenario(runtime.ScenarioDuplicateConcurrent)))
		work.wait()
		for _, r := range rep.Results {
			if r.Scenario != runtime.ScenarioDuplicateConcurrent {
				continue
			}
			assert.Empty(t, r.Trace.Refused, "run %d", i+1)
			assert.NotEmpty(t, r.Trace.Unattributed, "run %d: the work's calls were not said to be unattributable", i+1)
			assert.True(t, r.Inconclusive, "run %d", i+1)
			for _, f := range r.Findings {
				assert.False(t, f.Severity == runtime.SeverityError, "run %d: %s", i+1, f.Message)
			}
		}
	}
}

// A serial agent whose tool posts to a fake of its service, whose handler
// writes through a traced sink: the sink's call is made inside the tool's
// (it serves its HTTP request), and the two were never a batch of parallel
// calls. They were numbered one, and the suite ran partial_batch_failure
// scenarios on a serial agent (red team). Two requests the agent sends in
// parallel are still a batch, and get their partial batch scenarios.
func TestHandlerCallIsNotABatchWithTheRequestItServes(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(map[bool]string{false: "serial", true: "parallel"}[parallel], func(t *testing.T) {
			var desk *realworld.Desk
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if _, err := desk.OpenTraced(r.Context(), r.URL.Query().Get("key")); err != nil {
					http.Error(rw, err.Error(), http.StatusBadGateway)
				}
			}))
			defer srv.Close()
			agent := func(ctx context.Context) error {
				if !parallel {
					return realworld.RequestTicketTraced(ctx, srv.URL, "D-1")
				}
				var g errgroup.Group
				for _, k := range []string{"D-1", "D-2"} {
					g.Go(func() error { return realworld.RequestTicketTraced(ctx, srv.URL, k) })
				}
				return g.Wait()
			}
			rep := testkit.Run(&fakeT{name: "TestHandlerBatch"}, agent,
				testkit.Setup(func(context.Context) error { desk = realworld.NewDesk(); return nil }),
				testkit.State(func() any { return desk.Tickets() }),
				testkit.StallTimeout(3*time.Second))
			noStall(t, rep)
			batches, partial := 0, 0
			for _, o := range rep.Baseline.Trace.Ops {
				batches = max(batches, o.Batch)
			}
			for _, r := range rep.Results {
				if r.Kind == runtime.ScenarioPartialBatch {
					partial++
				}
			}
			if parallel {
				assert.Equal(t, 1, batches, "two requests in flight together: one batch")
				assert.NotZero(t, partial, "no partial_batch_failure scenario for two parallel requests")
			} else {
				assert.Zero(t, batches, "a serial agent's request and the handler's call were numbered a batch")
				assert.Zero(t, partial, "partial_batch_failure scenarios on a serial agent")
			}
		})
	}
}

var alertOp = &runtime.Op{Name: "alert", Kind: runtime.KindWrite, Params: []string{"key"}}

// alertVerdict checks the suite of an agent that sends an alert beside a
// request to the desk: the alert's retry and redelivery are duplicates
// unless its sink sends once per key (keyed).
func alertVerdict(t *testing.T, rep *runtime.Report, keyed bool) {
	t.Helper()
	noStall(t, rep)
	got := codes(rep)
	for _, sc := range []string{"lost_acknowledgement/alert#1", "crash_restart/alert#1", "duplicate_delivery/sequential"} {
		if keyed {
			assert.NotContains(t, got[sc], runtime.CodeDuplicateWrite, "%s: %v", sc, got[sc])
		} else {
			assert.Contains(t, got[sc], runtime.CodeDuplicateWrite, "%s: %v", sc, got[sc])
		}
	}
}

// runAlertTurns runs the suite of an agent that runs its turn, trying it
// up to three times while it fails; setup makes the world, state shows it.
func runAlertTurns(name string, turn func(context.Context) error, setup func(), state func() any) *runtime.Report {
	agent := func(ctx context.Context) error {
		var err error
		for range 3 {
			if err = turn(ctx); err == nil {
				return nil
			}
		}
		return err
	}
	return testkit.Run(&fakeT{name: name}, agent,
		testkit.Setup(func(context.Context) error { setup(); return nil }),
		testkit.State(state),
		testkit.StallTimeout(3*time.Second))
}

// newDeskServer serves a fake of the help desk: a POST opens the ticket
// of its key through the desk's traced sink, unless it is open.
func newDeskServer(desk func() *realworld.Desk) *httptest.Server {
	var mu sync.Mutex
	return httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		key := r.URL.Query().Get("key")
		if desk().Tickets()[key] > 0 {
			return
		}
		if _, err := desk().OpenTraced(r.Context(), key); err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
		}
	}))
}

// pending counts work in flight; wait returns once none is. Unlike a
// sync.WaitGroup, it may be added to while another goroutine waits.
type pending struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    int
}

func (p *pending) init() {
	if p.cond == nil {
		p.cond = sync.NewCond(&p.mu)
	}
}

func (p *pending) add() {
	p.mu.Lock()
	p.init()
	p.n++
	p.mu.Unlock()
}

func (p *pending) done() {
	p.mu.Lock()
	p.init()
	if p.n--; p.n == 0 {
		p.cond.Broadcast()
	}
	p.mu.Unlock()
}

func (p *pending) wait() {
	p.mu.Lock()
	p.init()
	for p.n > 0 {
		p.cond.Wait()
	}
	p.mu.Unlock()
}

// postKey posts to srv with key in the query, and closes the answer's body.
func postKey(ctx context.Context, srv *httptest.Server, key string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/?key="+key, nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp, nil
}

// One model turn sends an alert (a traced write, its effect a mail State
// does not show) and, beside it on a goroutine of its own, posts to a
// fake of the desk, whose handler opens a ticket through a traced sink;
// the turn is retried on error. The handler's call came while the alert
// was in flight and was taken for the alert's request (judge.servedBy):
// the ticket was credited to the alert's first execution, whose effect
// was then seen, and its retry, which changed nothing State shows, was
// absorbed. The second mail went unseen in lost_acknowledgement and
// crash_restart, and the verdict depended on the op's name ("alert" sorts
// before "openTicket"; a "send_mail" was caught). A handler's call serves
// a write only when that write's goroutine waits for the HTTP answer. An
// alert the sink sends once per key (MarkReplayed) passes.
func TestRequestBesideAWriteIsNotServedByIt(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		t.Run(map[bool]string{false: "a mail per call", true: "a mail per key"}[keyed], func(t *testing.T) {
			var (
				desk *realworld.Desk
				mu   sync.Mutex
				sent map[string]bool
			)
			srv := newDeskServer(func() *realworld.Desk { return desk })
			defer srv.Close()
			alert := func(ctx context.Context, key string) error {
				return tracedCall(ctx, alertOp, []any{key}, []any{key}, nil, func(ctx context.Context) error {
					time.Sleep(5 * time.Millisecond) // the mail service's round trip
					mu.Lock()
					defer mu.Unlock()
					if keyed && sent[key] {
						runtime.MarkReplayed(ctx)
						return nil
					}
					sent[key] = true
					return nil
				})
			}
			rep := runAlertTurns("TestRequestBeside", func(ctx context.Context) error {
				var g errgroup.Group
				g.Go(func() error { return alert(ctx, "m-1") })
				g.Go(func() error {
					_, err := postKey(ctx, srv, "D-1")
					return err
				})
				return g.Wait()
			}, func() { desk, sent = realworld.NewDesk(), map[string]bool{} }, func() any { return desk.Tickets() })
			alertVerdict(t, rep, keyed)
		})
	}
}

// As above, but the alert sends its mail over HTTP, to a mail service of
// this process, and the desk's request goes out once the mail service has
// the alert's: the handler's call came while the alert's goroutine waited
// for an HTTP answer, the mail's, and was credited to it (servedCall), so
// that the alert's first execution was seen to open the ticket and its
// retry, which changed nothing State shows, was absorbed: the second mail
// went unseen (red team T2). Another goroutine of the invocation waited
// for an answer too, the desk's: the request may be either's, and the
// handler's call is a write of its own. A mail service that sends once per
// key, and says so (the alert then calls MarkReplayed), passes.
func TestRequestOfAnotherGoroutineIsNotServedByAWaitingWrite(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		t.Run(map[bool]string{false: "a mail per call", true: "a mail per key"}[keyed], func(t *testing.T) {
			var (
				desk    *realworld.Desk
				mu      sync.Mutex
				sent    map[string]bool
				waiting chan struct{} // closed once the mail service has the alert's request
			)
			mail := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				mu.Lock()
				if waiting != nil {
					close(waiting)
					waiting = nil
				}
				mu.Unlock()
				time.Sleep(20 * time.Millisecond) // the mail service's round trip
				mu.Lock()
				defer mu.Unlock()
				key := r.URL.Query().Get("key")
				if keyed && sent[key] {
					rw.Header().Set("Replayed", "true")
					return
				}
				sent[key] = true
			}))
			defer mail.Close()
			deskSrv := newDeskServer(func() *realworld.Desk { return desk })
			defer deskSrv.Close()
			alert := func(ctx context.Context, key string) error {
				return tracedCall(ctx, alertOp, []any{key}, []any{key}, nil, func(ctx context.Context) error {
					resp, err := postKey(ctx, mail, key)
					if err == nil && resp.Header.Get("Replayed") == "true" {
						runtime.MarkReplayed(ctx)
					}
					return err
				})
			}
			rep := runAlertTurns("TestRequestOfAnotherGoroutine", func(ctx context.Context) error {
				accepted := make(chan struct{})
				mu.Lock()
				waiting = accepted
				mu.Unlock()
				var g errgroup.Group
				g.Go(func() error { return alert(ctx, "m-1") })
				g.Go(func() error {
					select {
					case <-accepted:
					case <-time.After(100 * time.Millisecond): // the alert's request was lost
					}
					_, err := postKey(ctx, deskSrv, "D-1")
					return err
				})
				return g.Wait()
			}, func() { desk, sent = realworld.NewDesk(), map[string]bool{} }, func() any { return desk.Tickets() })
			alertVerdict(t, rep, keyed)
			for sc, cs := range codes(rep) {
				if keyed && slices.Contains(cs, runtime.CodeDuplicateWrite) {
					t.Errorf("%s: a duplicate_write of an agent whose mail service sends once per key: %v", sc, cs)
				}
			}
		})
	}
}
