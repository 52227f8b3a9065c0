package refund

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agentidem/agentidem-go/idem"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

// Payment is a card payment that may be refunded.
type Payment struct {
	ID       string `json:"id"`
	Amount   int    `json:"amount"`
	Status   string `json:"status"` // "paid" or "refunded"
	Refunded int    `json:"refunded"`
}

// Receipt confirms one refund.
type Receipt struct {
	RefundID  string `json:"refund_id"`
	PaymentID string `json:"payment_id"`
	Amount    int    `json:"amount"`
}

// ErrNotFound is returned for an unknown payment.
var ErrNotFound = errors.New("payment not found")

// Bank is an in-memory payment provider: the world the agent acts on. Every
// refund it executes moves money, so two refunds of one payment are a real
// loss.
type Bank struct {
	mu       sync.Mutex
	payments map[string]*Payment
	refunds  []Receipt
	keys     *idem.Store // idempotency keys, as a payment API keeps them
}

// NewBank returns a bank holding one paid payment per id.
func NewBank(amount int, ids ...string) *Bank {
	b := &Bank{payments: map[string]*Payment{}, keys: idem.NewMemory()}
	for _, id := range ids {
		b.payments[id] = &Payment{ID: id, Amount: amount, Status: "paid"}
	}
	return b
}

// Refunds returns the refunds executed so far.
func (b *Bank) Refunds() []Receipt {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Receipt(nil), b.refunds...)
}

// GetPayment reads a payment.
//
//agentidem:read name=getPayment entity=id
func (b *Bank) GetPayment(ctx context.Context, id string) (Payment, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.payments[id]
	if !ok {
		return Payment{}, fmt.Errorf("get payment %s: %w", id, ErrNotFound)
	}
	return *p, nil
}

// Refund gives the whole amount of a payment back. It does not check
// whether the payment was already refunded: like many payment APIs, it
// trusts the caller, which is what makes a blind retry dangerous.
//
//agentidem:write identity=id name=refund
func (b *Bank) Refund(ctx context.Context, id string) (Receipt, error) {
	return b.refund(id)
}

// RefundWithKey is Refund behind an idempotency key, the way payment APIs
// offer it: the first request with a key executes, a repeat with the same
// key gets the stored receipt and moves no money. The key must come from the
// work (this payment's refund), never be fresh per attempt.
//
//agentidem:write identity=id name=refundWithKey
func (b *Bank) RefundWithKey(ctx context.Context, id, key string) (Receipt, error) {
	r, _, err := idem.Do(ctx, b.keys, key, id, func(context.Context) (Receipt, error) {
		return b.refund(id)
	})
	return r, err
}

func (b *Bank) refund(id string) (Receipt, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.payments[id]
	if !ok {
		return Receipt{}, fmt.Errorf("refund %s: %w", id, ErrNotFound)
	}
	p.Status = "refunded"
	p.Refunded += p.Amount
	r := Receipt{RefundID: fmt.Sprintf("re_%d", len(b.refunds)+1), PaymentID: id, Amount: p.Amount}
	b.refunds = append(b.refunds, r)
	return r, nil
}
