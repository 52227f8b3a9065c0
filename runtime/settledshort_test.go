package runtime

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// ticketDesk is a queue whose worker, started by Setup, takes a job (its
// count of pending jobs falls) and then opens the ticket; after the
// baseline's world, it opens it 60 ms after taking the job. The Settle
// reads the count, as one on a NATS consumer's pending counts does.
type ticketDesk struct {
	mu      sync.Mutex
	starts  int
	pending int
	tickets []string
	jobs    chan string
	done    chan struct{}
}

func (d *ticketDesk) start() {
	d.mu.Lock()
	d.starts++
	d.pending, d.tickets = 0, nil
	slow := d.starts > 1
	d.mu.Unlock()
	d.jobs, d.done = make(chan string, 4), make(chan struct{})
	go func() {
		defer close(d.done)
		for conv := range d.jobs {
			d.mu.Lock()
			d.pending--
			d.mu.Unlock()
			if slow {
				time.Sleep(60 * time.Millisecond)
			}
			d.mu.Lock()
			if !slices.Contains(d.tickets, conv) {
				d.tickets = append(d.tickets, conv)
			}
			d.mu.Unlock()
		}
	}()
}

func (d *ticketDesk) stop() { close(d.jobs); <-d.done }

func (d *ticketDesk) snapshot() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.tickets)
}

// A Settle that said quiet before the worker opened the ticket: the end of
// the lost request, retried once, lacks the ticket the baseline's held.
// The scenario is inconclusive, as before, and its note now names the
// Settle first, where it named an untraced call or the world changing by
// itself (red team rS #2, rtu/natspub TestNATSPublishKeyed).
func TestASettleThatSaidQuietTooSoonIsNamedInTheNote(t *testing.T) {
	d := &ticketDesk{}
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
			}); err == nil {
				return nil
			}
		}
		return err
	}
	settle := func(ctx context.Context) error {
		for {
			d.mu.Lock()
			n := d.pending
			d.mu.Unlock()
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
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error { d.start(); return nil }),
		Teardown(func(context.Context) error { d.stop(); return nil }),
		State(d.snapshot), Settle(settle), OnlyScenario("lost_request/open_ticket#1"))
	if err != nil {
		t.Fatal(err)
	}
	res := resultOf(t, rep, "lost_request/open_ticket#1")
	assert.True(t, res.Inconclusive, "a Settle that said quiet too soon: %v %v", res.Findings, res.Trace.Notes)
	assert.Empty(t, res.Findings)
	got := notesSaying(res.Trace, "the state at the end differs from the baseline's")
	if assert.Len(t, got, 1, "notes %q", res.Trace.Notes) {
		assert.Contains(t, got[0], "most likely the Settle said so before they carried out what the calls set going")
		assert.Contains(t, got[0], "testkit.SettleUntil with a condition on the state")
	}
}
