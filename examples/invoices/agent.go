// Package invoices holds agents whose model turns emit several tool calls
// at once, run in parallel the way agent runtimes dispatch them. Each bug
// lives in one interleaving or one partial failure; the scheduler finds each
// on the first go test and prints the schedule that replays it.
//
//   - Dependency: createInvoice and attachInvoice in one turn
//     (dependent_calls_concurrent); fixed: two turns.
//   - Read after write: "set seat count to 12 and tell me the new monthly
//     total" as two parallel calls quotes a stale total under some orders
//     (order_variant_outcome); fixed: read after the write returned.
//   - Mutual exclusion: a discount and a credit written to one invoice at
//     once (concurrent_writes_same_entity); fixed: one after the other.
//   - Partial batch: three line items and a notification in one turn; one
//     fails with a conflict and the agent replays all four
//     (partial_batch_replay). Retrying only the call that failed fixes that,
//     but line items are not idempotent, so a redelivered invocation still
//     bills them twice; the keyed variant sends idempotency keys derived
//     from the work and is safe under every scenario.
package invoices

import (
	"context"
	"errors"
	"sync"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
)

// parallel runs the tool calls of one model turn concurrently, as agent
// runtimes do, and returns every call's error.
func parallel(calls ...func() error) []error {
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = call()
		}()
	}
	wg.Wait()
	return errs
}

// DependencyAgent files an invoice for an order.
type DependencyAgent struct {
	Billing *Billing
	Fixed   bool
}

// Run creates invoice INV-1 and attaches order ORD-9 to it.
//
//agentidem:ignore seeded bug: the scheduler must catch it (TestDependencyBugIsCaught)
func (a *DependencyAgent) Run(ctx context.Context) error {
	create := func() error { _, err := a.Billing.CreateInvoiceTraced(ctx, "INV-1", "acme"); return err }
	attach := func() error { return a.Billing.AttachInvoiceTraced(ctx, "INV-1", "ORD-9") }
	if !a.Fixed {
		return errors.Join(parallel(create, attach)...) // one turn: the bug
	}
	if err := create(); err != nil {
		return err
	}
	return attach()
}

// SeatsAgent answers "set seat count to 12 and tell me the new monthly
// total".
type SeatsAgent struct {
	Billing *Billing
	Fixed   bool
}

// Run sets the seats and returns the total it quotes.
func (a *SeatsAgent) Run(ctx context.Context) (int, error) {
	var total int
	set := func() error { return a.Billing.SetSeatsTraced(ctx, "sub-1", 12) }
	quote := func() error {
		var err error
		total, err = a.Billing.MonthlyTotalTraced(ctx, "sub-1")
		return err
	}
	if !a.Fixed {
		return total, errors.Join(parallel(set, quote)...)
	}
	if err := set(); err != nil {
		return 0, err
	}
	err := quote()
	return total, err
}

// AdjustAgent applies a discount and a credit to invoice INV-1.
type AdjustAgent struct {
	Billing *Billing
	Fixed   bool
}

// Run creates the invoice, then applies both adjustments.
func (a *AdjustAgent) Run(ctx context.Context) error {
	if _, err := a.Billing.CreateInvoiceTraced(ctx, "INV-1", "acme"); err != nil {
		return err
	}
	discount := func() error { return a.Billing.ApplyDiscountTraced(ctx, "INV-1", 10) }
	credit := func() error { return a.Billing.ApplyCreditTraced(ctx, "INV-1", 5) }
	if !a.Fixed {
		return errors.Join(parallel(discount, credit)...)
	}
	if err := discount(); err != nil {
		return err
	}
	return credit()
}

// LinesAgent adds three line items to INV-1 and notifies accounting, in one
// turn, retrying on conflicts.
type LinesAgent struct {
	Billing *Billing
	// RetryFailed retries only the calls that failed, not the batch.
	RetryFailed bool
	// Keyed sends an idempotency key per line, derived from the work.
	Keyed bool
}

// Run issues the batch; after a conflict the buggy agent replays the whole
// batch, the fixed one only the calls that failed.
func (a *LinesAgent) Run(ctx context.Context) error {
	key := func(parts ...any) string {
		if !a.Keyed {
			return ""
		}
		return idem.Key(parts...)
	}
	line := func(sku string) func() error {
		return func() error { return a.Billing.AddLineItemTraced(ctx, "INV-1", sku, key("line", "INV-1", sku)) }
	}
	calls := []func() error{
		line("sku-a"), line("sku-b"), line("sku-c"),
		func() error { return a.Billing.NotifyAccountingTraced(ctx, "INV-1", key("notify", "INV-1")) },
	}
	for attempt := 0; attempt < 3; attempt++ {
		errs := parallel(calls...)
		var failed []func() error
		for i, err := range errs {
			if err != nil {
				if !conflict(err) {
					return err
				}
				failed = append(failed, calls[i])
			}
		}
		if len(failed) == 0 {
			return nil
		}
		if a.RetryFailed {
			calls = failed
		}
	}
	return errors.New("batch kept conflicting")
}

func conflict(err error) bool {
	return errors.Is(err, ErrConflict) || errors.Is(err, runtime.ErrInjected)
}
