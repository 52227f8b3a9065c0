// Package production is the proof that the spans of generated wrappers find,
// in production, the duplicate refund the fault suite finds in tests.
//
// A payment provider (an httptest server) books a refund and acknowledges it
// late; the agent's HTTP call times out for real and the agent retries:
//
//   - RetryingAgent retries without an idempotency key: the provider books
//     the refund twice, and agentidem-gen audit finds duplicate_write in the
//     exported spans.
//   - KeyedAgent sends a key derived from the order: the provider answers the
//     retry from its stored receipt (runtime.MarkReplayed), and the export
//     audits clean.
//
// The same export shows the other production findings: RunKeyed with
// FreshKey (a new idempotency key per attempt) is identity_unstable, with
// WorkKey it is clean; Bill with parallel dispatch puts invoice.attach in
// flight with the invoice.create it declares after= (dependent_calls_concurrent),
// in order it is clean.
//
// The program installs the observer with one line at start-up
// (agentidemotel.Install); nothing else in the agent or its tools changes.
package production

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
)

// Agent refunds one order through Payments, retrying after an error.
type Agent struct {
	Payments *Payments
	// Timeout bounds each attempt (the client's deadline).
	Timeout time.Duration
	// Keyed sends an idempotency key derived from the order.
	Keyed bool
}

// RetryingAgent retries a refund that timed out, without a key.
func RetryingAgent(p *Payments, timeout time.Duration) *Agent {
	return &Agent{Payments: p, Timeout: timeout}
}

// KeyedAgent retries with an idempotency key derived from the work.
func KeyedAgent(p *Payments, timeout time.Duration) *Agent {
	return &Agent{Payments: p, Timeout: timeout, Keyed: true}
}

// Run refunds cents for order, trying up to three times.
func (a *Agent) Run(ctx context.Context, order string, cents int) (Receipt, error) {
	ctx, span := otel.Tracer("refund-agent").Start(ctx, "refund-agent")
	defer span.End()
	key := ""
	if a.Keyed {
		key = "refund:" + order
	}
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		actx, cancel := context.WithTimeout(ctx, a.Timeout)
		var r Receipt
		r, err = a.Payments.RefundTraced(actx, order, cents, key)
		cancel()
		if err == nil {
			return r, nil
		}
	}
	return Receipt{}, fmt.Errorf("refund %s: giving up: %w", order, err)
}
