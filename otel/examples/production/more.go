package production

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
)

// RefundKeyed is Refund for a provider that keys refunds by the caller's
// idempotency key: the key is the identity, the order the entity.
//
//agentidem:write identity=key entity=order name=refund.keyed
func (p *Payments) RefundKeyed(ctx context.Context, key, order string, cents int) (Receipt, error) {
	return p.Refund(ctx, order, cents, key)
}

// KeyPerAttempt makes the key of each attempt: the bug is a fresh key per
// attempt, the fix a key derived from the work alone.
type KeyPerAttempt func(order string, attempt int) string

// FreshKey is the bug: a new key for every attempt.
func FreshKey(order string, attempt int) string { return fmt.Sprintf("%s-attempt-%d", order, attempt) }

// WorkKey is the fix: the key names the work.
func WorkKey(order string, _ int) string { return "refund:" + order }

// RunKeyed refunds cents for order through RefundKeyed, up to three
// attempts of timeout each, with the keys key makes.
func RunKeyed(ctx context.Context, p *Payments, timeout time.Duration, key KeyPerAttempt, order string, cents int) error {
	ctx, span := otel.Tracer("refund-agent").Start(ctx, "refund-agent")
	defer span.End()
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		actx, cancel := context.WithTimeout(ctx, timeout)
		_, err = p.RefundKeyedTraced(actx, key(order, attempt), order, cents)
		cancel()
		if err == nil {
			return nil
		}
	}
	return err
}

// Invoices is a billing service whose calls take a few milliseconds.
type Invoices struct {
	mu       sync.Mutex
	invoices map[string]bool
	attached map[string]bool
	Latency  time.Duration
}

// NewInvoices returns an empty billing service.
func NewInvoices(latency time.Duration) *Invoices {
	return &Invoices{invoices: map[string]bool{}, attached: map[string]bool{}, Latency: latency}
}

// Create creates the invoice of order.
//
//agentidem:write identity=order name=invoice.create
func (v *Invoices) Create(ctx context.Context, order string) error {
	time.Sleep(v.Latency)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.invoices[order] = true
	return nil
}

// Attach attaches the invoice of order to its refund; the invoice must
// exist.
//
//agentidem:write identity=order name=invoice.attach after=invoice.create
func (v *Invoices) Attach(ctx context.Context, order string) error {
	time.Sleep(v.Latency / 2)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.invoices[order] {
		return fmt.Errorf("attach %s: no invoice yet", order)
	}
	v.attached[order] = true
	return nil
}

// Bill creates and attaches the invoice of order. parallel is the bug,
// seeded on purpose: both calls dispatched at once, as a model's parallel
// tool calls are, for the audit of the exported spans to catch
// (TestParallelDependentCallsAreFound). agentidem-vet reports it too
// (invoice.attach ... both start in one concurrent batch): a true
// finding, silenced on its line so that CI's vet of this module stays
// clean; analyzer/testdata/src/deps billBehindAFlag shows it still fires.
func Bill(ctx context.Context, v *Invoices, order string, parallel bool) error {
	ctx, span := otel.Tracer("billing-agent").Start(ctx, "billing-agent")
	defer span.End()
	if !parallel {
		if err := v.CreateTraced(ctx, order); err != nil {
			return err
		}
		return v.AttachTraced(ctx, order)
	}
	var wg sync.WaitGroup
	var errs [2]error
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = v.CreateTraced(ctx, order) }()
	//agentidem:ignore seeded bug: the audit must catch it (TestParallelDependentCallsAreFound)
	go func() { defer wg.Done(); errs[1] = v.AttachTraced(ctx, order) }()
	wg.Wait()
	if errs[0] != nil {
		return errs[0]
	}
	return errs[1]
}
