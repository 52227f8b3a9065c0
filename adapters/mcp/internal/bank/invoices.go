package bank

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/runtime"
)

// InvoiceTools is the agentidem view of the invoice tools: attaching an
// order to an invoice must wait for the invoice.
var InvoiceTools = agentidemmcp.Tools{
	"create_invoice": agentidemmcp.Write(agentidemmcp.Identity("invoice_id")),
	"attach_invoice": agentidemmcp.Write(agentidemmcp.Identity("invoice_id", "order_id"),
		agentidemmcp.Entity("invoice_id"), agentidemmcp.After("create_invoice")),
}

// CreateIn is the input of create_invoice.
type CreateIn struct {
	InvoiceID string `json:"invoice_id" jsonschema:"id of the new invoice"`
}

// AttachIn is the input of attach_invoice.
type AttachIn struct {
	InvoiceID string `json:"invoice_id" jsonschema:"invoice to attach to"`
	OrderID   string `json:"order_id" jsonschema:"order to attach"`
}

// Invoices accepts an attachment to an invoice that does not exist yet, as
// many APIs do, and remembers it as dangling. Both tools are idempotent by
// the ids the caller chooses.
type Invoices struct {
	mu       sync.Mutex
	invoices map[string]bool
	attached map[string]string
	dangling []string
}

// NewInvoices returns an empty invoice store.
func NewInvoices() *Invoices {
	return &Invoices{invoices: map[string]bool{}, attached: map[string]string{}}
}

// Create is the create_invoice tool.
func (s *Invoices) Create(ctx context.Context, in CreateIn) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.invoices[in.InvoiceID] {
		runtime.MarkReplayed(ctx)
	}
	s.invoices[in.InvoiceID] = true
	return "created " + in.InvoiceID, nil
}

// Attach is the attach_invoice tool.
func (s *Invoices) Attach(ctx context.Context, in AttachIn) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.attached[in.OrderID] == in.InvoiceID {
		runtime.MarkReplayed(ctx)
		return "attached", nil
	}
	if !s.invoices[in.InvoiceID] {
		s.dangling = append(s.dangling, in.OrderID+"->"+in.InvoiceID)
	}
	s.attached[in.OrderID] = in.InvoiceID
	return "attached", nil
}

// Check is the invariant: no attachment before its invoice.
func (s *Invoices) Check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.dangling) > 0 {
		return fmt.Errorf("attached before the invoice existed: %s", strings.Join(s.dangling, ", "))
	}
	return nil
}

// InvoiceClient files invoice INV-1 for order ORD-9. OneTurn sends both
// calls at once, as an agent runtime runs the tool calls of one model turn
// (the seeded bug); otherwise it attaches once the invoice exists.
type InvoiceClient struct {
	OneTurn bool
	Call    Caller
}

// Run makes the two calls.
func (c InvoiceClient) Run(ctx context.Context) error {
	create := func() error {
		_, err := c.Call(ctx, "create_invoice", map[string]any{"invoice_id": "INV-1"})
		return err
	}
	attach := func() error {
		_, err := c.Call(ctx, "attach_invoice", map[string]any{"invoice_id": "INV-1", "order_id": "ORD-9"})
		return err
	}
	if !c.OneTurn {
		if err := create(); err != nil {
			return err
		}
		return attach()
	}
	var wg sync.WaitGroup
	var errs [2]error
	wg.Go(func() { errs[0] = create() })
	wg.Go(func() { errs[1] = attach() })
	wg.Wait()
	return errors.Join(errs[:]...)
}
