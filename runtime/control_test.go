package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// beatWorld is a payments service with a worker whose heartbeat Setup
// starts: it bumps the worker's last_seen, in a row of its own, every 150
// ms, slower than the looks that learn what changes by itself (100 ms).
// A repeated charge (the order found charged) answers once the heartbeat
// beat after it began, as a loaded service's slow answer: its window
// holds a beat on every run.
type beatWorld struct {
	mu       sync.Mutex
	balance  int
	charged  map[string]bool
	lastSeen int
	// naive charges again an order it charged; correct answers from its
	// record. naiveMail charges once but queues a receipt each time.
	naive, naiveMail bool
	// mailer makes charge queue a receipt (in a queue State does not
	// read) that a mailer of Setup's sends 10 ms later, counted in State
	// (mails); a repeat answers once every receipt queued went out. The
	// naive agent's repeat queues a second receipt, mailed inside its
	// window: that window changes mails and the heartbeat, neither of
	// which any window of the baseline changed.
	mailer        bool
	queued, mails int
	kick          chan struct{}
	stop          func()
}

func (w *beatWorld) start() {
	w.mu.Lock()
	w.balance, w.charged, w.lastSeen, w.queued, w.mails = 100, map[string]bool{}, 0, 0, 0
	w.mu.Unlock()
	w.kick = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(150 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.mu.Lock()
				w.lastSeen++
				w.mu.Unlock()
			}
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.kick:
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			w.mu.Lock()
			w.mails = w.queued
			w.mu.Unlock()
		}
	})
	w.stop = func() { cancel(); wg.Wait() }
}

func (w *beatWorld) snapshot() any {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := map[string]any{
		"accounts": []map[string]any{{"id": "acme", "balance": w.balance}},
		"workers":  []map[string]any{{"name": "w1", "last_seen": w.lastSeen}},
	}
	if w.mailer {
		st["accounts"] = []map[string]any{{"id": "acme", "balance": w.balance, "mails": w.mails}}
	}
	return st
}

// charge debits the account for order id, once (or, naive, each time).
func (w *beatWorld) charge(id string) error {
	w.mu.Lock()
	seen := w.charged[id]
	if !seen || w.naive {
		w.balance -= 10
	}
	if !seen || w.naive || w.naiveMail {
		if w.mailer {
			w.queued++
			select {
			case w.kick <- struct{}{}:
			default:
			}
		}
	}
	w.charged[id] = true
	beat := w.lastSeen
	w.mu.Unlock()
	if !seen {
		time.Sleep(2 * time.Millisecond)
		return nil
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		w.mu.Lock()
		done := w.lastSeen > beat && w.mails == w.queued
		w.mu.Unlock()
		if done {
			return nil
		}
	}
	return errors.New("no answer")
}

// runBeat runs the suite of an agent that charges order o-1, and once
// more where the charge failed, in world w, with opts besides Setup,
// Teardown and State.
func runBeat(t *testing.T, w *beatWorld, opts ...Option) *Report {
	t.Helper()
	op := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error {
		var err error
		for range 2 {
			if err = traced(ctx, op, []any{"o-1"}, []any{"o-1"}, func(context.Context) error { return w.charge("o-1") }); err == nil || errors.Is(err, context.Canceled) {
				return err
			}
		}
		return err
	},
		append([]Option{
			Setup(func(context.Context) error { w.start(); return nil }),
			Teardown(func(context.Context) error { w.stop(); return nil }),
			State(w.snapshot),
		}, opts...)...)
	require.NoError(t, err)
	return rep
}

// A heartbeat slower than the looks, in a row of its own, beats inside
// the window of a correct charge's repeat: the repeat is unjudged, the
// scenario inconclusive, with a note naming the control run that saw the
// value change with no agent running. Before, the correct agent was a
// duplicate_write ("workers[0].last_seen: 0 → 1") in crash_restart and
// duplicate_delivery/sequential on every run (red team rQ's charge probe
// over HTTP and SQLite, both builds). The naive agent, which charges
// again, changes the balance in that window: still a duplicate_write.
func TestAHeartbeatSlowerThanTheLooksIsAskedOfAControlRun(t *testing.T) {
	correct := runBeat(t, &beatWorld{})
	assert.Empty(t, findings(correct, ""), "the correct agent: %s", findingMessages(correct, ""))
	for _, sc := range []string{ScenarioDuplicateSeq, "crash_restart/charge#1"} {
		res := resultOf(t, correct, sc)
		assert.True(t, res.Inconclusive, "%s: unjudged", sc)
		assert.NotEmpty(t, notesSaying(res.Trace, "a control run, Setup and then State read with no agent running, saw it change"), "%s: the note names the control run", sc)
	}

	naive := runBeat(t, &beatWorld{naive: true})
	for _, sc := range []string{ScenarioDuplicateSeq, "crash_restart/charge#1"} {
		assert.Equal(t, []string{"duplicate_write charge"}, findings(naive, sc), "%s: the second charge", sc)
	}
}

// A second receipt mailed inside the window of a repeat that charges once
// but queues its receipt again changes a count that no window of the
// baseline changed (there the mail went out after the call), beside the
// heartbeat: the control run sees the heartbeat change with no agent,
// never the count, and the repeat stays a duplicate_write. The correct
// agent, which queues nothing again, is unjudged as above.
func TestAControlRunLeavesACountOnlyTheAgentChangesJudged(t *testing.T) {
	naive := runBeat(t, &beatWorld{naiveMail: true, mailer: true})
	for _, sc := range []string{ScenarioDuplicateSeq, "crash_restart/charge#1"} {
		assert.Equal(t, []string{"duplicate_write charge"}, findings(naive, sc), "%s: the second receipt: %s", sc, findingMessages(naive, sc))
	}
	correct := runBeat(t, &beatWorld{mailer: true})
	assert.Empty(t, findings(correct, ""), "the correct agent: %s", findingMessages(correct, ""))
	assert.Positive(t, correct.InconclusiveCount, "repeats unjudged")
	for _, r := range correct.Results {
		for _, n := range r.Trace.Notes {
			if strings.Contains(n, "control run") {
				assert.NotContains(t, n, "mails", "%s: the count is no heartbeat", r.Scenario)
			}
		}
	}
}

// A Settle that waits for what only the agent does (the order charged)
// never says quiet where no agent runs. Before the baseline's agent, where
// the suite looks for what the world changes by itself (settledbeat.go),
// it waited for good: the test hung in its baseline. It is given the
// stall bound there, and the baseline's trace says why nothing was
// learned. In a control run it is given a second, and the watch goes on
// without it; stopped at the Settle's error, the control left the correct
// agent a duplicate_write.
func TestAControlRunGoesOnPastASettleThatWaitsForTheAgent(t *testing.T) {
	for _, naive := range []bool{false, true} {
		w := &beatWorld{naive: naive}
		rep := runBeat(t, w,
			Settle(func(ctx context.Context) error {
				for {
					w.mu.Lock()
					charged := w.charged["o-1"]
					w.mu.Unlock()
					if charged {
						return nil
					}
					select {
					case <-ctx.Done():
						return ctx.Err()
					case <-time.After(time.Millisecond):
					}
				}
			}),
			StallTimeout(3*time.Second))
		assert.NotEmpty(t, notesSaying(rep.Baseline.Trace, "the Settle did not say the world was quiet within 3s after Setup"), "the look before the baseline's agent says why it learned nothing: %q", rep.Baseline.Trace.Notes)
		if naive {
			assert.Equal(t, []string{"duplicate_write charge"}, findings(rep, ScenarioDuplicateSeq), "the second charge")
			continue
		}
		assert.Empty(t, findings(rep, ""), "the correct agent: %s", findingMessages(rep, ""))
	}
}
