package runtime

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outboxRow is a message queued for the mailer, sent once the worker has
// mailed it.
type outboxRow struct {
	ID   int    `json:"id"`
	Ref  string `json:"ref"`
	Sent bool   `json:"sent"`
}

// shopWorld is an order service with an outbox, and a mailer: a worker
// that Setup starts, as a test starts the queue worker of its service,
// which mails every queued message a few milliseconds after place_order
// queued it. No Settle is given: the worker's mail lands outside every
// traced write in the baseline.
type shopWorld struct {
	mu     sync.Mutex
	orders []string
	outbox []outboxRow
	emails []string
	// naive makes place_order queue the confirmation each time it is
	// called, the order only once: a second delivery mails twice.
	naive bool
	// late makes a second delivery of place_order ask the mailer for the
	// confirmation again, which it mails a few milliseconds after the
	// first: the repeat's window holds only the first mail, and the
	// second lands after it.
	late  bool
	again int
	// hidden leaves the outbox out of State (a queue in Redis, NATS, a
	// channel): State sees the orders and the mails.
	hidden bool
	// receipt makes the mailer record each mail's delivery receipt 20 ms
	// after it sent it: the world's change comes in two steps, and a
	// repeat's window holds the first.
	receipt  bool
	receipts []string
	// beat adds a heartbeat to State, bumped every 10 ms by a goroutine
	// of Setup's: the baseline's state never holds still.
	beat  bool
	beats int
	kick  chan struct{}
	stop  func()
}

func (w *shopWorld) start() {
	w.mu.Lock()
	w.orders, w.outbox, w.emails, w.again, w.receipts, w.beats = nil, nil, nil, 0, nil, 0
	w.mu.Unlock()
	w.kick = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		if !w.beat {
			return
		}
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.mu.Lock()
				w.beats++
				w.mu.Unlock()
			}
		}
	}()
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.kick:
			}
			select { // as a ticker's worker waits, in a select
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
			w.mu.Lock()
			for i := range w.outbox {
				if r := &w.outbox[i]; !r.Sent {
					r.Sent = true
					w.emails = append(w.emails, "confirmation "+r.Ref)
				}
			}
			again := w.again
			w.again = 0
			sent := len(w.emails)
			w.mu.Unlock()
			if w.receipt {
				select {
				case <-ctx.Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
				w.mu.Lock()
				for len(w.receipts) < sent {
					w.receipts = append(w.receipts, "delivered")
				}
				w.mu.Unlock()
			}
			if again > 0 {
				time.Sleep(5 * time.Millisecond)
				w.mu.Lock()
				for range again {
					w.emails = append(w.emails, "confirmation again")
				}
				w.mu.Unlock()
			}
		}
	}()
	w.stop = func() { cancel(); <-done; <-beating }
}

func (w *shopWorld) snapshot() any {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := map[string]any{"orders": slices.Clone(w.orders), "outbox": slices.Clone(w.outbox), "emails": slices.Clone(w.emails)}
	if w.hidden {
		delete(st, "outbox")
	}
	if w.receipt {
		st["receipts"] = slices.Clone(w.receipts)
	}
	if w.beat {
		st["heartbeat"] = w.beats
	}
	return st
}

// place records the order and queues its confirmation, once. A delivery
// that finds the order placed answers once the confirmation went out, as
// a service that reports the order settled does: under a second delivery
// the worker's mail lands inside the calls' window.
func (w *shopWorld) place(ref string) error {
	w.mu.Lock()
	placed := slices.Contains(w.orders, ref)
	if !placed {
		w.orders = append(w.orders, ref)
	}
	if placed && w.late {
		w.again++
	}
	if !placed || w.naive {
		w.outbox = append(w.outbox, outboxRow{ID: len(w.outbox) + 1, Ref: ref})
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	w.mu.Unlock()
	if !placed {
		// The service answers a moment after it queued the mail: two
		// deliveries at once overlap, and the mail lands in their
		// calls' window, after the first answered in the baseline.
		time.Sleep(2 * time.Millisecond)
		return nil
	}
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		w.mu.Lock()
		sent := !slices.ContainsFunc(w.outbox, func(r outboxRow) bool { return r.Ref == ref && !r.Sent })
		w.mu.Unlock()
		if sent {
			return nil
		}
	}
	return errors.New("confirmation not sent")
}

func shopAgent(w *shopWorld) func(context.Context) error {
	op := &Op{Name: "place_order", Kind: KindWrite, Params: []string{"ref"}}
	return func(ctx context.Context) error {
		var err error
		for range 3 {
			if err = traced(ctx, op, []any{"ORD-1"}, []any{"ORD-1"}, func(context.Context) error { return w.place("ORD-1") }); err == nil || errors.Is(err, context.Canceled) {
				return err
			}
		}
		return err
	}
}

func runShop(t *testing.T, w *shopWorld) *Report {
	t.Helper()
	rep, err := Run(context.Background(), t.Name(), shopAgent(w),
		Setup(func(context.Context) error { w.start(); return nil }),
		Teardown(func(context.Context) error { w.stop(); return nil }),
		State(w.snapshot))
	require.NoError(t, err)
	return rep
}

// worldNotes returns the notes of a trace that say a repeat's window held
// what the world did by itself.
func worldNotes(tr *Trace) []string {
	return notesSaying(tr, "the baseline's state went through by itself")
}

// A queue worker that Setup started mails each order's confirmation a few
// milliseconds after place_order queued it, and no Settle is given. In the
// baseline the mail lands after the call returned, outside every traced
// write; the baseline's end is read once the state held still (Setup left
// a goroutine running), so the suite learns what the world does alone. A
// second delivery of place_order finds the order placed and answers once
// the mail went out, so the mail lands in the repeat's window: alone
// (sequential, a retry after a lost acknowledgement, the restart after a
// crash) or with the first call (concurrent). The window then went where
// the world took the baseline by itself, and the run ended as the baseline
// did: no second effect, with a note. Before, every one of those repeats
// was a duplicate_write, and the PostgreSQL probe this models (an outbox
// worker started in Setup) failed its correct agent in about half its
// runs. The naive place_order queues a second mail; the other buggy one
// has the mailer send a second mail after the repeat's window (caught by
// the end, read once it held still).
func TestWorldWorkerChangeInARepeatsWindow(t *testing.T) {
	for _, c := range []struct {
		label                              string
		naive, late, hidden, receipt, beat bool
	}{
		{label: "upsert"},
		{label: "naive", naive: true},
		{label: "second mail after the window", late: true},
		{label: "upsert, the queue outside State", hidden: true},
		// The repeat's window holds the mail the first call queued, the
		// second lands after it: it was absorbed as another delivery's
		// untraced write, in a scenario of one delivery, in 15 of 16
		// runs (red team, /tmp/rt26 w1).
		{label: "naive, the queue outside State", naive: true, hidden: true},
		{label: "second mail after the window, the queue outside State", late: true, hidden: true},
		// The window holds the mail, the receipt lands after it: the
		// baseline went through the state with the mail alone as its
		// end was read again (red team, /tmp/rt26 w2).
		{label: "upsert, a receipt after the mail", receipt: true},
		{label: "naive, a receipt after the mail", naive: true, receipt: true},
		// A heartbeat in State: the baseline never held still, and the
		// repeat's window holds the world's mail; it cannot be judged,
		// and its scenario is inconclusive, buggy or not (red team,
		// /tmp/rt28 w3: the correct agent was a duplicate_write on
		// every run).
		{label: "upsert, a heartbeat", beat: true},
		{label: "naive, a heartbeat", naive: true, beat: true},
	} {
		t.Run(c.label, func(t *testing.T) {
			for range 2 {
				w := &shopWorld{naive: c.naive, late: c.late, hidden: c.hidden, receipt: c.receipt, beat: c.beat}
				rep := runShop(t, w)
				if c.beat {
					// Never a false duplicate, never silently safe.
					if !c.naive {
						assert.Empty(t, findings(rep, ""), "the world's mail under a heartbeat")
					}
					assert.True(t, len(findings(rep, "")) > 0 || rep.InconclusiveCount > 0, "safe, with a repeat no one could judge")
					continue
				}
				if c.naive || c.late {
					for _, sc := range []string{ScenarioDuplicateSeq, ScenarioDuplicateConcurrent, "lost_acknowledgement/place_order#1"} {
						assert.Equal(t, []string{"duplicate_write place_order"}, findings(rep, sc), sc)
					}
					continue
				}
				require.Empty(t, findings(rep, ""))
				assert.Zero(t, rep.InconclusiveCount)
				for _, r := range rep.Results {
					if r.Scenario != ScenarioDuplicateSeq && r.Scenario != ScenarioDuplicateConcurrent {
						continue
					}
					var repeat *Operation
					for i, o := range r.Trace.Ops {
						if o.Repeat != "" {
							repeat = &r.Trace.Ops[i]
						}
					}
					require.NotNil(t, repeat, r.Scenario)
					assert.Equal(t, RepeatAbsorbed, repeat.Repeat, r.Scenario)
					if c.hidden && r.Scenario == ScenarioDuplicateConcurrent {
						// The mail in the window is also what the other
						// delivery's code may have written untraced
						// (untraced.go): either note says why.
						assert.Len(t, append(worldNotes(r.Trace), untracedNotes(r.Trace)...), 1, "%s: %q", r.Scenario, r.Trace.Notes)
						continue
					}
					if r.Scenario == ScenarioDuplicateSeq && repeat.JudgedBy == JudgedByState {
						// The mail the worker sends 20 ms after it was
						// queued landed before the repeat began: the
						// first call, whose answer takes 2 ms, took
						// longer, or the second delivery started late,
						// as on a loaded machine (1 run of 10 under
						// -race beside CPU burners). The repeat's window
						// held nothing, and nothing of the world's
						// needed a note. Where the mail lands is the
						// machine's doing; the verdict (absorbed, no
						// finding) is the product's.
						assert.Empty(t, repeat.StateChange, r.Scenario)
						continue
					}
					want := JudgedByEndState // its own window, then the end
					if r.Scenario == ScenarioDuplicateConcurrent {
						want = JudgedByOneExecution // the calls overlapped
					}
					assert.Equal(t, want, repeat.JudgedBy, r.Scenario)
					assert.Len(t, worldNotes(r.Trace), 1, "%s: %q", r.Scenario, r.Trace.Notes)
				}
			}
		})
	}
}

// As the receipt cases above, with the baseline's agent returning 80 ms
// after its call, as a loaded machine (go test -race beside busy loops)
// made it: the mail and its receipt both landed before it returned, in
// one gap between snapshots, and the baseline never showed the mail
// alone. A correct agent's repeat, whose window holds the mail alone (the
// receipt lands after it), was a duplicate_write in every scenario with a
// repeat (on that machine, 3 runs of 20 of the receipt case); the window
// is part of the way the world went by itself in that gap, and the run
// ended as the baseline did. The naive agent mails twice and is caught.
func TestWorldWorkerStepsThatLandedBeforeTheBaselineReturned(t *testing.T) {
	for _, naive := range []bool{false, true} {
		w := &shopWorld{receipt: true, naive: naive}
		setups := 0
		agent := func(ctx context.Context) error {
			err := shopAgent(w)(ctx)
			if setups == 1 {
				time.Sleep(80 * time.Millisecond) // the baseline's agent, slow to return
			}
			return err
		}
		rep, err := Run(context.Background(), t.Name(), agent,
			Setup(func(context.Context) error { setups++; w.start(); return nil }),
			Teardown(func(context.Context) error { w.stop(); return nil }),
			State(w.snapshot))
		require.NoError(t, err)
		require.NotContains(t, rep.Baseline.Trace.returned, `"receipts":null`, "the receipt landed before the baseline's agent returned")
		if naive {
			for _, sc := range []string{ScenarioDuplicateSeq, ScenarioDuplicateConcurrent, "lost_acknowledgement/place_order#1"} {
				assert.Equal(t, []string{"duplicate_write place_order"}, findings(rep, sc), sc)
			}
			continue
		}
		assert.Empty(t, findings(rep, ""))
		assert.Zero(t, rep.InconclusiveCount)
	}
}

// partWay, the rule of the test above at the level of one state.
func TestPartWayMixesTheWorldsSteps(t *testing.T) {
	ret := map[string]any{"orders": []any{"ORD-1"}, "emails": nil, "receipts": nil, "order": map[string]any{"status": "new", "paid": true}}
	last := map[string]any{"orders": []any{"ORD-1"}, "emails": []any{"mail"}, "receipts": []any{"delivered"}, "order": map[string]any{"status": "shipped", "paid": true}}
	mail := map[string]any{"orders": []any{"ORD-1"}, "emails": []any{"mail"}, "receipts": nil, "order": map[string]any{"status": "new", "paid": true}}
	assert.True(t, partWay(mail, ret, last), "the mail, not its receipt")
	assert.True(t, partWay(last, ret, last))
	assert.False(t, partWay(ret, ret, last), "none of the world's steps")
	twice := map[string]any{"orders": []any{"ORD-1"}, "emails": []any{"mail", "mail"}, "receipts": nil, "order": map[string]any{"status": "new", "paid": true}}
	assert.False(t, partWay(twice, ret, last), "a value neither held")
	other := map[string]any{"orders": []any{"ORD-1", "ORD-2"}, "emails": []any{"mail"}, "receipts": nil, "order": map[string]any{"status": "new", "paid": true}}
	assert.False(t, partWay(other, ret, last), "a change where the world made none")
	unpaid := map[string]any{"orders": []any{"ORD-1"}, "emails": []any{"mail"}, "receipts": nil, "order": map[string]any{"status": "shipped"}}
	assert.False(t, partWay(unpaid, ret, last), "a key the world did not remove")
	extra := map[string]any{"orders": []any{"ORD-1"}, "emails": []any{"mail"}, "receipts": nil, "order": map[string]any{"status": "new", "paid": true}, "lock": "held"}
	assert.False(t, partWay(extra, ret, last), "a key the world did not add")
}
