package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A red team's agent (rtX #4) starts an export, polls it until it is done,
// then checks for a reminder and arms one if there is none (no key). The
// poll is a traced read whose body selects on ctx.Done() and the channel
// of a ticker that a poller made when Setup built it, shared by both
// deliveries as a service client is. The two deliveries wake on alternate
// ticks: one returns from its poll a tick before the other. The lockstep
// never recorded its tool bodies (only the scheduler did), so a body
// blocked in that select on the invocation's own goroutine was quiet at
// once, the first delivery back went on alone at has_reminder, armed, and
// the second then saw the reminder: duplicate_delivery/concurrent passed,
// on most runs (UNSAFE only when the machine's timing kept the polls
// together). A body now counts as busy for bodyGrace under the lockstep
// too, and both deliveries check before either arms, on every run.

var (
	opStartExport = &Op{Name: "start_export", Kind: KindWrite, Params: []string{"id"}, Idempotent: true, Pos: "tickerpoll_test.go:1"}
	opPollExport  = &Op{Name: "poll_export", Kind: KindRead, Params: []string{"id"}, Pos: "tickerpoll_test.go:2"}
	opHasReminder = &Op{Name: "has_reminder", Kind: KindRead, Params: []string{"user"}, Pos: "tickerpoll_test.go:3"}
	opArmReminder = &Op{Name: "arm_reminder", Kind: KindWrite, Params: []string{"user"}, Pos: "tickerpoll_test.go:4"}
)

// exportWorld is the export service, the poller with its shared ticker,
// and the mailer of reminders. keyed makes arming a reminder return the
// one armed already for the user (the provider's idempotency key).
type exportWorld struct {
	keyed  bool
	mu     sync.Mutex
	doneAt map[string]time.Time
	armed  map[string]int
	ticker *time.Ticker
}

func (w *exportWorld) reset(every time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ticker != nil {
		w.ticker.Stop()
	}
	w.doneAt, w.armed = map[string]time.Time{}, map[string]int{}
	w.ticker = time.NewTicker(every) // made outside any tool, shared by the deliveries
}

func (w *exportWorld) start(id string, takes time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.doneAt[id]; !ok {
		w.doneAt[id] = time.Now().Add(takes)
	}
}

func (w *exportWorld) done(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	at, ok := w.doneAt[id]
	return ok && !time.Now().Before(at)
}

// until polls id on the shared ticker until the export is done.
func (w *exportWorld) until(ctx context.Context, id string) error {
	w.mu.Lock()
	tk := w.ticker
	w.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tk.C:
			if w.done(id) {
				return nil
			}
		}
	}
}

func (w *exportWorld) has(user string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.armed[user] > 0
}

func (w *exportWorld) arm(user string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keyed && w.armed[user] > 0 {
		return
	}
	w.armed[user]++
}

func (w *exportWorld) snapshot() any {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := map[string]int{}
	for k, v := range w.armed {
		m[k] = v
	}
	return m
}

// checkThenArmAfterPoll is the red team's agent.
func checkThenArmAfterPoll(w *exportWorld) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := traced(ctx, opStartExport, []any{"exp-ada"}, []any{"exp-ada"}, func(context.Context) error {
			w.start("exp-ada", 30*time.Millisecond)
			return nil
		}); err != nil {
			return err
		}
		if err := traced(ctx, opPollExport, []any{"exp-ada"}, nil, func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			return w.until(ctx, "exp-ada")
		}); err != nil {
			return err
		}
		var has bool
		if err := traced(ctx, opHasReminder, []any{"ada"}, nil, func(context.Context) error {
			has = w.has("ada")
			return nil
		}); err != nil || has {
			return err
		}
		return traced(ctx, opArmReminder, []any{"ada"}, []any{"ada"}, func(context.Context) error {
			w.arm("ada")
			return nil
		})
	}
}

func runTickerPoll(t *testing.T, keyed bool, every, stall time.Duration) *Result {
	return runTickerPollReport(t, keyed, every, stall).Results[0]
}

func runTickerPollReport(t *testing.T, keyed bool, every, stall time.Duration) *Report {
	t.Helper()
	w := &exportWorld{keyed: keyed}
	defer func() {
		if w.ticker != nil {
			w.ticker.Stop()
		}
	}()
	rep, err := Run(context.Background(), "ticker_poll", checkThenArmAfterPoll(w),
		OnlyScenario(ScenarioDuplicateConcurrent),
		Setup(func(context.Context) error { w.reset(every); return nil }),
		StallTimeout(stall),
		State(w.snapshot))
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded, "baseline: %+v", rep.BaselineFailure)
	require.Len(t, rep.Results, 1)
	return rep
}

// The second delivery's poll returns a tick (20 ms) after the first's:
// the first waits at has_reminder for it, and both check before either
// arms. Without the body recorded, the first went on alone at once.
func TestCheckThenArmAfterSharedTickerPollIsCaught(t *testing.T) {
	for range 3 {
		r := runTickerPoll(t, false, 20*time.Millisecond, 10*time.Second)
		assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "%v", r.Findings)
		assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "went on alone")
	}
}

// The twin: the reminder armed with a key is armed once, whichever
// delivery checks first.
func TestCheckThenArmAfterSharedTickerPollKeyedIsSafe(t *testing.T) {
	for range 3 {
		r := runTickerPoll(t, true, 20*time.Millisecond, 10*time.Second)
		assert.Empty(t, resultCodes(r), "%v", r.Findings)
		assert.True(t, r.Safe)
		assert.False(t, r.Inconclusive)
	}
}

// A tick every 300 ms: the second delivery's poll returns 300 ms after
// the first's, past bodyGrace. A tool body blocked in a select is waited
// for up to aloneAfter (1 s here) under the lockstep: both still check
// before either arms.
func TestCheckThenArmAfterSlowTickerPollIsCaught(t *testing.T) {
	for range 2 {
		r := runTickerPoll(t, false, 300*time.Millisecond, 10*time.Second)
		assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "%v", r.Findings)
		assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "went on alone")
	}
}

// A tick every second, with aloneAfter at 750 ms (a stall bound of
// 1.5 s): the first delivery back goes on alone, and the scenario says
// that the harness, not the agent, ran the deliveries one after the
// other: inconclusive, never safe, for the buggy agent and its keyed twin
// alike (neither was tested at once).
func TestTickerPollPastAloneAfterIsInconclusive(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		rep := runTickerPollReport(t, keyed, time.Second, 1500*time.Millisecond)
		r := rep.Results[0]
		// The report says so at its top, not only in the scenario's notes.
		assert.Condition(t, func() bool {
			for _, n := range rep.Notes {
				if strings.HasPrefix(n, "duplicate_delivery/concurrent showed no problem, but its deliveries did not run at once throughout: delivery ") {
					return true
				}
			}
			return false
		}, "keyed %v: notes %q", keyed, rep.Notes)
		assert.True(t, r.Inconclusive, "keyed %v: %v", keyed, r.Findings)
		assert.False(t, r.Safe, "keyed %v", keyed)
		notes := strings.Join(r.Trace.Notes, "\n")
		assert.Regexp(t, `went on alone at its call 3 \(has_reminder\): delivery [12] was still inside a tool call after`, notes, "keyed %v", keyed)
		assert.NotContains(t, notes, "outside any gate", "keyed %v", keyed)
		assert.Contains(t, notes, "blocked in a select at tickerpoll_test.go:", "keyed %v", keyed)
		assert.Contains(t, notes, "so this scenario did not test the deliveries at once", "keyed %v", keyed)
	}
}
