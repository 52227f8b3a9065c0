package runtime

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// settleLagDesk is a ticket desk whose worker, started by Setup, takes a
// job (the count of pending jobs falls) and then opens the ticket, once
// per conversation where dedup is set. After the baseline's world, it
// opens the nth ticket of a world lag(n) after taking its job. Its Settle
// reads the count, as one on a NATS consumer's pending counts does: it
// says quiet while the worker still holds a job.
type settleLagDesk struct {
	dedup   bool
	lag     func(n int) time.Duration
	mu      sync.Mutex
	starts  int
	pending int
	tickets []string
	jobs    chan string
	done    chan struct{}
}

func (d *settleLagDesk) start() {
	d.mu.Lock()
	d.starts++
	d.pending, d.tickets = 0, nil
	slow := d.starts > 1
	d.mu.Unlock()
	d.jobs, d.done = make(chan string, 4), make(chan struct{})
	go func() {
		defer close(d.done)
		n := 0
		for conv := range d.jobs {
			d.mu.Lock()
			d.pending--
			d.mu.Unlock()
			n++
			if slow {
				time.Sleep(d.lag(n))
			}
			d.mu.Lock()
			if !d.dedup || !slices.Contains(d.tickets, conv) {
				d.tickets = append(d.tickets, conv)
			}
			d.mu.Unlock()
		}
	}()
}

func (d *settleLagDesk) stop() { close(d.jobs); <-d.done }

func (d *settleLagDesk) snapshot() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.tickets)
}

func (d *settleLagDesk) settle(ctx context.Context) error { return noneLeft(ctx, &d.mu, &d.pending) }

// noneLeft is a Settle that reads a count of pending jobs, under mu, every
// millisecond until it is zero.
func noneLeft(ctx context.Context, mu *sync.Mutex, pending *int) error {
	for {
		mu.Lock()
		n := *pending
		mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// run runs the suite of an agent that opens conv-42's ticket, retried once
// where retry is set, with State and the Settle, and opts.
func (d *settleLagDesk) run(t *testing.T, retry bool, opts ...Option) *Report {
	t.Helper()
	op := &Op{Name: "open_ticket", Kind: KindWrite, Params: []string{"conversation"}}
	agent := func(ctx context.Context) error {
		var err error
		for range 2 {
			if err = traced(ctx, op, []any{"conv-42"}, []any{"conv-42"}, func(ctx context.Context) error {
				d.mu.Lock()
				d.pending++
				d.mu.Unlock()
				d.jobs <- "conv-42"
				return nil
			}); err == nil || !retry {
				return err
			}
		}
		return err
	}
	rep, err := Run(context.Background(), t.Name(), agent, append([]Option{
		Setup(func(context.Context) error { d.start(); return nil }),
		Teardown(func(context.Context) error { d.stop(); return nil }),
		State(d.snapshot), Settle(d.settle)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The worker opens a world's second ticket 3 ms after taking its job. The
// buggy agent's second ticket, queued by a redelivery or a restart,
// landed after the Settle said quiet and after the end was read: its
// repeat's window held no change, the end the baseline's one ticket, and
// every repeat scenario passed, with no note (red team rT #5,
// rtu/natspub). The end is now read again a moment after the Settle: the
// buggy agent's repeat scenarios are never a plain pass; the correct one
// (the desk opens a conversation's ticket once) stays safe.
func TestASettleThatSaysQuietBeforeTheWorkerWrites(t *testing.T) {
	for _, dedup := range []bool{true, false} {
		d := &settleLagDesk{dedup: dedup, lag: func(n int) time.Duration {
			if n == 1 {
				return 0
			}
			return 3 * time.Millisecond
		}}
		rep := d.run(t, false)
		if dedup {
			// Never unsafe. On a loaded machine the worker may take
			// even the first job late, into the repeat's window: that
			// scenario is then inconclusive, its note naming the Settle
			// that let the first ticket through (settledlate.go,
			// unexplained.go).
			assert.True(t, rep.Safe, "the correct agent")
			for _, r := range rep.Results {
				if r.Inconclusive {
					assert.NotEmpty(t, notesSaying(r.Trace, "the Settle said"), "the correct agent's %s: %q", r.Scenario, r.Trace.Notes)
				}
			}
			continue
		}
		for _, sc := range []string{"crash_restart/open_ticket#1", ScenarioDuplicateSeq, ScenarioDuplicateConcurrent} {
			res := resultOf(t, rep, sc)
			assert.True(t, len(res.Findings) > 0 || res.Inconclusive, "%s of the buggy agent passed: %v", sc, res.Trace.Notes)
		}
	}
}

// The worker opens every ticket 60 ms after taking its job: the end of the
// lost request, retried once, read after the Settle, lacks the ticket the
// baseline's held. The scenario is inconclusive, as before, and its note
// now names the Settle first, where it named an untraced call or the world
// changing by itself (red team rS #2, rtu/natspub TestNATSPublishKeyed).
func TestASettleThatSaidQuietTooSoonIsNamedInTheNote(t *testing.T) {
	d := &settleLagDesk{dedup: true, lag: func(int) time.Duration { return 60 * time.Millisecond }}
	rep := d.run(t, true, OnlyScenario("lost_request/open_ticket#1"))
	res := resultOf(t, rep, "lost_request/open_ticket#1")
	assert.True(t, res.Inconclusive, "a Settle that said quiet too soon: %v %v", res.Findings, res.Trace.Notes)
	assert.Empty(t, res.Findings)
	got := notesSaying(res.Trace, "the state at the end differs from the baseline's")
	if assert.Len(t, got, 1, "notes %q", res.Trace.Notes) {
		assert.Contains(t, got[0], "most likely the Settle said so before they carried out what the calls set going")
		assert.Contains(t, got[0], "testkit.SettleUntil with a condition on the state")
	}
}
