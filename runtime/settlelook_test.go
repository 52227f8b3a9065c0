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
// per conversation where dedup is set.
type settleLagDesk struct {
	mu      sync.Mutex
	starts  int
	pending int
	dedup   bool
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
			if slow && n > 1 {
				time.Sleep(3 * time.Millisecond)
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

// A Settle that reads a queue's pending count, which falls as the worker
// takes a job, before it opens the ticket: after the baseline's world the
// worker opens every ticket but a world's first 3 ms after taking its job.
// The buggy agent's second ticket, queued by a redelivery or a restart,
// landed after the Settle said quiet and after the end was read: its
// repeat's window held no change, the end the baseline's one ticket, and
// every repeat scenario passed, with no note (red team rT #5,
// rtu/natspub). The end is now read again a moment after the Settle: the
// buggy agent's repeat scenarios are never a plain pass; the correct one
// (the desk opens a conversation's ticket once) stays safe.
func TestASettleThatSaysQuietBeforeTheWorkerWrites(t *testing.T) {
	for _, dedup := range []bool{true, false} {
		d := &settleLagDesk{dedup: dedup}
		op := &Op{Name: "open_ticket", Kind: KindWrite, Params: []string{"conversation"}}
		agent := func(ctx context.Context) error {
			return traced(ctx, op, []any{"conv-42"}, []any{"conv-42"}, func(ctx context.Context) error {
				d.mu.Lock()
				d.pending++
				d.mu.Unlock()
				d.jobs <- "conv-42"
				return nil
			})
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
			State(d.snapshot), Settle(settle))
		if err != nil {
			t.Fatal(err)
		}
		if dedup {
			assert.True(t, rep.Safe, "the correct agent")
			assert.Zero(t, rep.InconclusiveCount, "the correct agent")
			continue
		}
		for _, sc := range []string{"crash_restart/open_ticket#1", ScenarioDuplicateSeq, ScenarioDuplicateConcurrent} {
			res := resultOf(t, rep, sc)
			assert.True(t, len(res.Findings) > 0 || res.Inconclusive, "%s of the buggy agent passed: %v", sc, res.Trace.Notes)
		}
	}
}
