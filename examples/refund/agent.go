// Package refund is the refund agent of the AgentIdem docs: read the
// payment, refund it if it is paid. It comes in the variants that the fault
// suite tells apart:
//
//   - NaiveAgent retries the refund on a timeout. A lost acknowledgement
//     turns one refund into two, and so does the same request delivered
//     twice at once.
//   - RereadAgent re-reads the payment before retrying. That fixes the
//     retry, but two deliveries at once still both see "paid" and both
//     refund: check-then-act is not atomic.
//   - KeyedAgent passes an idempotency key derived from the work to a sink
//     that enforces it. Safe under every scenario.
//   - GiveUpAgent and SilentAgent are controls that never retry: the first
//     returns the error, the second swallows it and claims success.
package refund

import (
	"context"
	"errors"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
)

const attempts = 3

// NaiveAgent refunds a payment and retries blindly on a timeout.
type NaiveAgent struct{ Bank *Bank }

// Run reads the payment and refunds it if it is still paid.
func (a *NaiveAgent) Run(ctx context.Context, paymentID string) (Receipt, error) {
	p, err := a.Bank.GetPaymentTraced(ctx, paymentID)
	if err != nil {
		return Receipt{}, err
	}
	if p.Status != "paid" {
		return Receipt{}, nil
	}
	var last error
	for i := 0; i < attempts; i++ {
		r, err := a.Bank.RefundTraced(ctx, paymentID)
		if err == nil {
			return r, nil
		}
		if !retryable(err) {
			return Receipt{}, err
		}
		last = err
	}
	return Receipt{}, last
}

// RereadAgent re-reads the payment before each retry.
type RereadAgent struct{ Bank *Bank }

// Run reads the payment, refunds it if paid, and after a timeout checks
// whether the refund went through before trying again.
func (a *RereadAgent) Run(ctx context.Context, paymentID string) (Receipt, error) {
	var last error
	for i := 0; i < attempts; i++ {
		p, err := a.Bank.GetPaymentTraced(ctx, paymentID)
		if err != nil {
			return Receipt{}, err
		}
		if p.Status != "paid" {
			return Receipt{}, nil // refunded, by us or before
		}
		r, err := a.Bank.RefundTraced(ctx, paymentID)
		if err == nil {
			return r, nil
		}
		if !retryable(err) {
			return Receipt{}, err
		}
		last = err
	}
	return Receipt{}, last
}

// KeyedAgent refunds through the bank's idempotency keys, with a key that
// names the work: retries and redeliveries send the same key.
type KeyedAgent struct{ Bank *Bank }

// Run reads the payment and refunds it under the key of this refund.
func (a *KeyedAgent) Run(ctx context.Context, paymentID string) (Receipt, error) {
	p, err := a.Bank.GetPaymentTraced(ctx, paymentID)
	if err != nil {
		return Receipt{}, err
	}
	if p.Status != "paid" {
		return Receipt{}, nil
	}
	key := idem.Key("refund", paymentID)
	var last error
	for i := 0; i < attempts; i++ {
		r, err := a.Bank.RefundWithKeyTraced(ctx, paymentID, key)
		if err == nil {
			return r, nil
		}
		if !retryable(err) {
			return Receipt{}, err
		}
		last = err
	}
	return Receipt{}, last
}

// GiveUpAgent refunds once under a stable key and returns any error.
type GiveUpAgent struct{ Bank *Bank }

// Run reads the payment and makes one refund attempt.
func (a *GiveUpAgent) Run(ctx context.Context, paymentID string) (Receipt, error) {
	p, err := a.Bank.GetPaymentTraced(ctx, paymentID)
	if err != nil || p.Status != "paid" {
		return Receipt{}, err
	}
	return a.Bank.RefundWithKeyTraced(ctx, paymentID, idem.Key("refund", paymentID))
}

// SilentAgent makes one refund attempt and reports success whatever
// happened: the bug ExactlyOnce exists for.
type SilentAgent struct{ Bank *Bank }

// Run reads the payment, tries one refund and ignores its error.
func (a *SilentAgent) Run(ctx context.Context, paymentID string) (Receipt, error) {
	p, err := a.Bank.GetPaymentTraced(ctx, paymentID)
	if err != nil || p.Status != "paid" {
		return Receipt{}, err
	}
	r, _ := a.Bank.RefundWithKeyTraced(ctx, paymentID, idem.Key("refund", paymentID))
	return r, nil
}

// retryable reports whether an error is worth another attempt: a timeout or
// an unavailable provider, injected or real.
func retryable(err error) bool {
	var t interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, runtime.ErrInjected) || (errors.As(err, &t) && t.Timeout())
}
