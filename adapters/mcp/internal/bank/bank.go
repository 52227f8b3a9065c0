// Package bank is the world of the MCP adapter tests: a payment provider
// served as MCP tools, and scripted clients that refund payments in
// parallel through any MCP client.
package bank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/idem"
)

// Payments are the ids the scripted clients refund.
var Payments = []string{"pay-1", "pay-2", "pay-3"}

// Tools is the agentidem view of the bank's MCP tools.
var Tools = agentidemmcp.Tools{
	"get_payment": agentidemmcp.Read(agentidemmcp.Entity("payment_id")),
	"refund":      agentidemmcp.Write(agentidemmcp.Identity("payment_id"), agentidemmcp.Redact("card_token")),
}

// Payment is one card payment.
type Payment struct {
	ID     string `json:"id"`
	Amount int    `json:"amount"`
	Status string `json:"status"` // paid or refunded
}

// Receipt confirms one refund.
type Receipt struct {
	RefundID  string `json:"refund_id"`
	PaymentID string `json:"payment_id"`
}

// GetPaymentIn is the input of get_payment.
type GetPaymentIn struct {
	PaymentID string `json:"payment_id" jsonschema:"the payment to read"`
}

// RefundIn is the input of refund.
type RefundIn struct {
	PaymentID string `json:"payment_id" jsonschema:"the payment to refund"`
	// Key is an idempotency key; a repeat with the same key moves no money.
	Key string `json:"idempotency_key,omitempty" jsonschema:"idempotency key of this refund"`
	// CardToken is secret: the adapter redacts it from traces.
	CardToken string `json:"card_token,omitempty" jsonschema:"card token"`
}

// Bank executes refunds; it trusts its caller, so a blind retry refunds
// twice unless the caller sends an idempotency key.
type Bank struct {
	mu       sync.Mutex
	payments map[string]*Payment
	refunds  []Receipt
	keys     *idem.Store
}

// New returns a bank holding the Payments, all paid.
func New() *Bank {
	b := &Bank{payments: map[string]*Payment{}, keys: idem.NewMemory()}
	for _, id := range Payments {
		b.payments[id] = &Payment{ID: id, Amount: 100, Status: "paid"}
	}
	return b
}

// GetPayment is the get_payment tool.
func (b *Bank) GetPayment(_ context.Context, in GetPaymentIn) (Payment, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.payments[in.PaymentID]
	if !ok {
		return Payment{}, fmt.Errorf("payment %s not found", in.PaymentID)
	}
	return *p, nil
}

// Refund is the refund tool.
func (b *Bank) Refund(ctx context.Context, in RefundIn) (Receipt, error) {
	if in.Key == "" {
		return b.refund(in.PaymentID)
	}
	r, _, err := idem.Do(ctx, b.keys, in.Key, in.PaymentID, func(context.Context) (Receipt, error) {
		return b.refund(in.PaymentID)
	})
	return r, err
}

func (b *Bank) refund(id string) (Receipt, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.payments[id]
	if !ok {
		return Receipt{}, fmt.Errorf("payment %s not found", id)
	}
	p.Status = "refunded"
	r := Receipt{RefundID: fmt.Sprintf("re_%d", len(b.refunds)+1), PaymentID: id}
	b.refunds = append(b.refunds, r)
	return r, nil
}

// Check is the invariant: no payment refunded twice.
func (b *Bank) Check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := map[string]int{}
	for _, r := range b.refunds {
		n[r.PaymentID]++
	}
	var twice []string
	for id, k := range n {
		if k > 1 {
			twice = append(twice, fmt.Sprintf("%s refunded %d times", id, k))
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		return errors.New(strings.Join(twice, "; "))
	}
	return nil
}

// Refunds counts the refunds executed.
func (b *Bank) Refunds() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.refunds)
}

// Caller calls one MCP tool and returns its structured or text result, or
// an error for a protocol error or a result with isError set.
type Caller func(ctx context.Context, tool string, args map[string]any) (json.RawMessage, error)

// Client is a scripted MCP client: it refunds every payment, all in
// parallel, reading each first, and retries a call that timed out.
type Client struct {
	// Keyed sends an idempotency key derived from the work (the fixed
	// client). Without it a retry after a lost acknowledgement refunds
	// twice (the seeded bug).
	Keyed bool
	Call  Caller
}

// Run refunds all Payments in parallel and returns the first error.
func (c Client) Run(ctx context.Context) error {
	errs := make([]error, len(Payments))
	var wg sync.WaitGroup
	for i, id := range Payments {
		wg.Go(func() { errs[i] = c.refundOne(ctx, id) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c Client) refundOne(ctx context.Context, id string) error {
	raw, err := c.Call(ctx, "get_payment", map[string]any{"payment_id": id})
	if err != nil {
		return err
	}
	var p Payment
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("get_payment %s: %w", id, err)
	}
	if p.Status != "paid" {
		return nil
	}
	args := map[string]any{"payment_id": id, "card_token": "tok_secret_" + id}
	if c.Keyed {
		args["idempotency_key"] = idem.Key("refund", id)
	}
	var last error
	for range 3 {
		_, err := c.Call(ctx, "refund", args)
		if err == nil {
			return nil
		}
		if !Retryable(err) {
			return err
		}
		last = err
	}
	return last
}

// Retryable reports whether an error from an MCP call is worth a retry: a
// timeout, an unavailable or conflicting provider. Errors cross MCP as
// text, so that is what it looks at.
func Retryable(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "timeout") || strings.Contains(msg, "unavailable") || strings.Contains(msg, "conflict")
}
