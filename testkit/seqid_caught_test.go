package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// countedDesk is seqDesk with a counter of the tickets opened beside the
// tickets, and the writes that real duplicates are made of.
type countedDesk struct {
	seqDesk
	opened int
}

var (
	openNewOp = &runtime.Op{Name: "open_new", Kind: runtime.KindWrite, Params: []string{"subject"}}
	bumpOp    = &runtime.Op{Name: "bump", Kind: runtime.KindWrite, Params: []string{"counter"}}
	swapOp    = &runtime.Op{Name: "swap", Kind: runtime.KindWrite, Params: []string{"a", "b"}}
)

// openNew opens a ticket on every call: a repeat is a second ticket.
func (d *countedDesk) openNew(ctx context.Context, subject string) error {
	return tracedCall(ctx, openNewOp, []any{subject}, []any{subject}, nil, func(context.Context) error {
		time.Sleep(time.Millisecond)
		d.mu.Lock()
		defer d.mu.Unlock()
		d.next++
		d.tickets[fmt.Sprintf("T-%d", d.next)] = subject
		return nil
	})
}

// bump adds one to the counter: a repeat counts again.
func (d *countedDesk) bump(ctx context.Context) error {
	return tracedCall(ctx, bumpOp, []any{"opened"}, []any{"opened"}, nil, func(context.Context) error {
		time.Sleep(time.Millisecond)
		d.mu.Lock()
		defer d.mu.Unlock()
		d.opened++
		return nil
	})
}

// swap swaps the subjects of tickets a and b: a repeat swaps them back.
func (d *countedDesk) swap(ctx context.Context, a, b string) error {
	return tracedCall(ctx, swapOp, []any{a, b}, []any{a, b}, nil, func(context.Context) error {
		time.Sleep(time.Millisecond)
		d.mu.Lock()
		defer d.mu.Unlock()
		d.tickets[a], d.tickets[b] = d.tickets[b], d.tickets[a]
		return nil
	})
}

func (d *countedDesk) options() []testkit.Option {
	return []testkit.Option{testkit.NoSummary(),
		testkit.Setup(func(context.Context) error {
			d.mu.Lock()
			d.next, d.opened, d.tickets = 0, 0, map[string]string{}
			d.mu.Unlock()
			return nil
		}),
		testkit.State(func() any {
			d.mu.Lock()
			defer d.mu.Unlock()
			return map[string]any{"tickets": maps.Clone(d.tickets), "opened": d.opened}
		}),
	}
}

// inParallel runs fs at once, as the tool calls of one model turn.
func inParallel(fs ...func() error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(fs))
	for i, f := range fs {
		wg.Go(func() { errs[i] = f() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// The end states of the tickets that parallel creates numbered are
// compared without those numbers only where nothing but the order of the
// creates chose them: a second ticket, a counter counted twice and a swap
// made twice (of tickets the agent names) are caught under
// duplicate_delivery/concurrent on every run, as they were before.
func TestRealDuplicatesBesideNumberedTicketsAreCaught(t *testing.T) {
	for _, c := range []struct {
		name  string
		agent func(d *countedDesk) func(context.Context) error
		op    string
	}{
		{"a new ticket per call", func(d *countedDesk) func(context.Context) error {
			return func(ctx context.Context) error {
				return inParallel(func() error { return d.openNew(ctx, "printer jam") }, func() error { return d.openNew(ctx, "vpn down") })
			}
		}, "open_new"},
		{"a counter beside idempotent opens", func(d *countedDesk) func(context.Context) error {
			return func(ctx context.Context) error {
				return inParallel(func() error { return d.openFor(ctx, "printer jam") }, func() error { return d.openFor(ctx, "vpn down") },
					func() error { return d.bump(ctx) })
			}
		}, "bump"},
		{"a swap of the tickets opened", func(d *countedDesk) func(context.Context) error {
			return func(ctx context.Context) error {
				if err := inParallel(func() error { return d.openFor(ctx, "printer jam") }, func() error { return d.openFor(ctx, "vpn down") }); err != nil {
					return err
				}
				return d.swap(ctx, "T-1", "T-2")
			}
		}, "swap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &countedDesk{}
			agent := c.agent(d)
			for range 8 {
				rep := testkit.Run(t, agent, d.options()...)
				// The op may lead the finding or follow from its lead
				// (open_for, whose tickets the end holds under other
				// numbers beside the real duplicate's effect).
				if got := concurrentFinding(rep); !strings.HasPrefix(got, runtime.CodeDuplicateWrite) || !strings.Contains(got, c.op) {
					t.Errorf("duplicate_delivery/concurrent found %q, want a duplicate_write of %s", got, c.op)
				}
			}
		})
	}
}

// concurrentFinding is the error findings of duplicate_delivery/concurrent,
// code and ops, one a line.
func concurrentFinding(rep *runtime.Report) string {
	var lines []string
	for _, r := range rep.Results {
		if r.Scenario != "duplicate_delivery/concurrent" {
			continue
		}
		for _, f := range r.Findings {
			if f.Severity == runtime.SeverityError {
				lines = append(lines, f.Code+" "+strings.Join(f.Ops, ",")+" "+strings.Join(f.Follows, ","))
			}
		}
	}
	return strings.Join(lines, "\n")
}
