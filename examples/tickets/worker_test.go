package tickets

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The worker opens a ticket this long after taking a request up: longer
// than the agents' Patience, so an impatient agent times out first.
const workerDelay = 50 * time.Millisecond

// recT is a testkit.TB that records failures, so a test can prove that a
// buggy agent FAILS the async assertions.
type recT struct {
	mu     sync.Mutex
	errors []string
}

func (r *recT) Helper()             {}
func (r *recT) Name() string        { return "TestWorker" }
func (r *recT) Logf(string, ...any) {}
func (r *recT) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recT) msg() string { r.mu.Lock(); defer r.mu.Unlock(); return strings.Join(r.errors, "\n") }

// asyncWorld is a helpdesk behind a worker whose announcements land in a
// testkit.Stream, as a message bus would carry them in production.
type asyncWorld struct {
	desk   *Helpdesk
	worker *Worker
	events *testkit.Stream
}

func newAsyncWorld(t *testing.T) *asyncWorld {
	w := &asyncWorld{desk: NewHelpdesk(), events: testkit.NewStream()}
	w.worker = NewWorker(w.desk, workerDelay, func(o Opened) {
		w.events.Emit(testkit.Event{Kind: "ticket.opened", Subject: o.DisputeID, Queue: o.Queue, Session: o.Session, Data: o.TicketID})
	})
	t.Cleanup(w.worker.Close)
	return w
}

// turn runs one agent turn for session and asserts its asynchronous
// effect: exactly one ticket for the dispute, on the disputes queue,
// attributed to the session, opened during this turn; then nothing more.
func (w *asyncWorld) turn(tb testkit.TB, session, disputeID string, run func(ctx context.Context) error) bool {
	tb.Helper()
	start := time.Now()
	if err := run(context.Background()); err != nil {
		tb.Errorf("agent: %v", err)
		return false
	}
	if _, ok := testkit.ExactlyOne(tb, w.events, testkit.KindFor("ticket.opened", disputeID), 500*time.Millisecond,
		testkit.OnQueue(Queue), testkit.FromSession(session), testkit.Since(start)); !ok {
		return false
	}
	return testkit.Quiet(tb, w.events, 200*time.Millisecond, time.Second, testkit.FromSession(session))
}

func TestAsyncAgentOpensOneTicketThenQuiet(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		w := newAsyncWorld(t)
		a := &AsyncAgent{Worker: w.worker, Session: "s-1"}
		start := time.Now()
		ok := w.turn(t, "s-1", dispute, func(ctx context.Context) error {
			r, err := a.Run(ctx, dispute)
			assert.Equal(t, StatusAccepted, r.Status, "the tool answers before the work is done")
			return err
		})
		require.True(t, ok)
		// The agent lost patience and resubmitted under the same key: the
		// helpdesk opened one ticket and announced it once.
		assert.Equal(t, 1, w.desk.Count(dispute, Queue))
		assert.Len(t, w.events.Events(), 1)
		// 30ms of patience, the 500ms window and 200ms of quiet, all on
		// virtual time (plus a nanosecond per assertion, which looks one
		// instant late).
		assert.Equal(t, 730*time.Millisecond+2*time.Nanosecond, time.Since(start))
	})
}

func TestResubmitAgentIsCaughtByExactlyOne(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		w := newAsyncWorld(t)
		a := &ResubmitAgent{Worker: w.worker, Session: "s-1"}
		ft := &recT{}
		start := time.Now()
		ok := w.turn(ft, "s-1", dispute, func(ctx context.Context) error {
			_, err := a.Run(ctx, dispute)
			return err
		})
		require.False(t, ok, "two tickets must fail the turn")
		// Submitted at 0 and, after 30ms of patience, again; the worker
		// opens them at 50ms and 100ms. The second fails at once.
		assert.Equal(t, 100*time.Millisecond+time.Nanosecond, time.Since(start))
		assert.Equal(t, `testkit.ExactlyOne: want exactly one ticket.opened D-1001 on queue "disputes" from session "s-1" since the turn started within 500ms (virtual time); `+
			`saw 2 by +70ms: #1 ticket.opened D-1001 queue="disputes" session="s-1" at +20ms, #2 ticket.opened D-1001 queue="disputes" session="s-1" at +70ms`, ft.msg())
		assert.Equal(t, 2, w.desk.Count(dispute, Queue), "the bug is real: two tickets")
	})
}

func TestMisroutedAgentIsCaughtByTheRoutingGuard(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		w := newAsyncWorld(t)
		a := &MisroutedAgent{Worker: w.worker, Session: "s-1"}
		ft := &recT{}
		require.False(t, w.turn(ft, "s-1", dispute, func(ctx context.Context) error {
			_, err := a.Run(ctx, dispute)
			return err
		}))
		assert.Equal(t, `testkit.ExactlyOne: want exactly one ticket.opened D-1001 on queue "disputes" from session "s-1" since the turn started within 500ms (virtual time); `+
			`saw #1 ticket.opened D-1001 queue="general" session="s-1" at +50ms: routing guard: on queue "general", want "disputes"`, ft.msg())
		// One ticket did open: only the routing guard tells this agent apart.
		_, ok := testkit.ExactlyOne(t, w.events, testkit.KindFor("ticket.opened", dispute), 10*time.Millisecond, testkit.FromSession("s-1"))
		assert.True(t, ok)
		assert.Equal(t, 0, w.desk.Count(dispute, Queue))
	})
}

func TestParallelSessionsAreAttributed(t *testing.T) {
	// Two conversations at once share the helpdesk and its event bus: the
	// fixed agent's session passes, the resubmitting one's fails, and
	// neither sees the other's ticket.
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		w := newAsyncWorld(t)
		good := &AsyncAgent{Worker: w.worker, Session: "s-good"}
		bad := &ResubmitAgent{Worker: w.worker, Session: "s-bad"}
		var goodOK, badOK bool
		goodT, badT := &recT{}, &recT{}
		var wg sync.WaitGroup
		wg.Go(func() {
			goodOK = w.turn(goodT, "s-good", dispute, func(ctx context.Context) error { _, err := good.Run(ctx, dispute); return err })
		})
		wg.Go(func() {
			badOK = w.turn(badT, "s-bad", "D-2002", func(ctx context.Context) error { _, err := bad.Run(ctx, "D-2002"); return err })
		})
		wg.Wait()
		assert.True(t, goodOK, goodT.msg())
		assert.False(t, badOK)
		assert.Contains(t, badT.msg(), `want exactly one ticket.opened D-2002 on queue "disputes" from session "s-bad"`)
		assert.Contains(t, badT.msg(), "saw 2 by")
	})
}

func TestEarlierTurnsDoNotCount(t *testing.T) {
	// The same session disputes a second charge: the first turn's ticket
	// is outside the second turn's window.
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		w := newAsyncWorld(t)
		a := &AsyncAgent{Worker: w.worker, Session: "s-1"}
		run := func(d string) func(context.Context) error {
			return func(ctx context.Context) error { _, err := a.Run(ctx, d); return err }
		}
		require.True(t, w.turn(t, "s-1", dispute, run(dispute)))
		turn2 := time.Now()
		require.True(t, w.turn(t, "s-1", "D-1002", run("D-1002")))

		// Without the window, "exactly one ticket opened" sees both turns.
		ft := &recT{}
		_, ok := testkit.ExactlyOne(ft, w.events, testkit.Kind("ticket.opened"), 10*time.Millisecond, testkit.FromSession("s-1"))
		assert.False(t, ok)
		assert.Contains(t, ft.msg(), "saw 2")
		_, ok = testkit.ExactlyOne(t, w.events, testkit.Kind("ticket.opened"), 10*time.Millisecond, testkit.FromSession("s-1"), testkit.Since(turn2))
		assert.True(t, ok)
	})
}
