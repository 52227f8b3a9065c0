package invoices

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

// Billing is an in-memory billing system: the world of the invoicing agent.
// Like many real APIs it is lax: it accepts an attachment to an invoice it
// does not know yet, and records it as dangling.
type Billing struct {
	// Strict makes AttachInvoice refuse an unknown invoice ("no such
	// invoice"), as most APIs do, instead of filing a dangling link.
	Strict bool

	mu        sync.Mutex
	invoices  map[string]*Invoice
	dangling  []string            // attachments made before their invoice existed
	seats     map[string]int      // subscription -> seats
	discounts map[string][]string // invoice -> adjustments, in the order applied
	lines     map[string]int      // invoice/sku -> times added
	posted    map[string]int      // invoice -> times posted
	keys      *idem.Store         // idempotency keys of AddLineItem and NotifyAccounting
}

// Invoice is a draft or posted invoice.
type Invoice struct {
	ID       string   `json:"id"`
	Customer string   `json:"customer"`
	Orders   []string `json:"orders"`
	Total    int      `json:"total"`
}

// NewBilling returns an empty billing system with one subscription of 10
// seats at 30 a seat.
func NewBilling() *Billing {
	return &Billing{
		invoices: map[string]*Invoice{}, seats: map[string]int{"sub-1": 10},
		discounts: map[string][]string{}, lines: map[string]int{}, posted: map[string]int{},
		keys: idem.NewMemory(),
	}
}

// SeatPrice is the monthly price of one seat.
const SeatPrice = 30

// Dangling returns the attachments made to invoices that did not exist yet.
func (b *Billing) Dangling() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dangling...)
}

// Adjustments returns the adjustments of an invoice in the order applied.
func (b *Billing) Adjustments(id string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.discounts[id]...)
}

// Lines returns how many times each line was added, by "invoice/sku".
func (b *Billing) Lines() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for k, v := range b.lines {
		out[k] = v
	}
	return out
}

// CreateInvoice opens a draft invoice.
//
//agentidem:write identity=id entity=id name=createInvoice
func (b *Billing) CreateInvoice(ctx context.Context, id, customer string) (Invoice, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if inv, ok := b.invoices[id]; ok {
		runtime.MarkReplayed(ctx) // the API answers a repeat with the same invoice
		return *inv, nil
	}
	inv := &Invoice{ID: id, Customer: customer}
	b.invoices[id] = inv
	return *inv, nil
}

// AttachInvoice links an order to an invoice. It must come after the
// invoice exists; the API does not check, it files a dangling link.
//
//agentidem:write identity=id,orderID entity=id after=createInvoice name=attachInvoice
func (b *Billing) AttachInvoice(ctx context.Context, id, orderID string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	inv, ok := b.invoices[id]
	if !ok && b.Strict {
		return fmt.Errorf("attach %s to %s: no such invoice", orderID, id)
	}
	if !ok {
		b.dangling = append(b.dangling, id+"<-"+orderID)
		return nil
	}
	for _, o := range inv.Orders {
		if o == orderID {
			runtime.MarkReplayed(ctx) // already attached: nothing to do
			return nil
		}
	}
	inv.Orders = append(inv.Orders, orderID)
	return nil
}

// SetSeats changes the seat count of a subscription.
//
//agentidem:write identity=sub,seats entity=sub name=setSeats
func (b *Billing) SetSeats(ctx context.Context, sub string, seats int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seats[sub] == seats {
		runtime.MarkReplayed(ctx) // setting a value it has is no new effect
	}
	b.seats[sub] = seats
	return nil
}

// MonthlyTotal quotes the monthly price of a subscription.
//
//agentidem:read entity=sub name=monthlyTotal
func (b *Billing) MonthlyTotal(ctx context.Context, sub string) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seats[sub] * SeatPrice, nil
}

// ApplyDiscount records a percentage discount on an invoice.
//
//agentidem:write identity=id,percent entity=id name=applyDiscount
func (b *Billing) ApplyDiscount(ctx context.Context, id string, percent int) error {
	b.adjust(ctx, id, fmt.Sprintf("discount %d%%", percent))
	return nil
}

// ApplyCredit records a fixed credit on an invoice.
//
//agentidem:write identity=id,amount entity=id name=applyCredit
func (b *Billing) ApplyCredit(ctx context.Context, id string, amount int) error {
	b.adjust(ctx, id, fmt.Sprintf("credit %d", amount))
	return nil
}

// adjust applies an adjustment once: the API keys adjustments by content.
func (b *Billing) adjust(ctx context.Context, id, what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, x := range b.discounts[id] {
		if x == what {
			runtime.MarkReplayed(ctx)
			return
		}
	}
	b.discounts[id] = append(b.discounts[id], what)
}

// ErrConflict is the billing API's answer when a write loses a race for a
// row: the call did not take effect and may be retried.
var ErrConflict = fmt.Errorf("conflict: try again")

// AddLineItem adds one line to an invoice. Each line is its own row, and
// adding it twice bills it twice, unless the call carries an idempotency
// key: a repeat of the key is answered without a second line.
//
//agentidem:write identity=id,sku entity="id + \"/\" + sku" name=addLineItem
func (b *Billing) AddLineItem(ctx context.Context, id, sku, key string) error {
	return b.once(ctx, key, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.lines[id+"/"+sku]++
	})
}

// NotifyAccounting tells accounting an invoice is ready; like AddLineItem
// it takes an optional idempotency key.
//
//agentidem:write identity=id entity="\"accounting/\" + id" name=notifyAccounting
func (b *Billing) NotifyAccounting(ctx context.Context, id, key string) error {
	return b.once(ctx, key, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.posted[id]++
	})
}

// once runs effect, at most once per key when key is not empty.
func (b *Billing) once(ctx context.Context, key string, effect func()) error {
	if key == "" {
		effect()
		return nil
	}
	_, _, err := idem.Do(ctx, b.keys, key, nil, func(context.Context) (struct{}, error) {
		effect()
		return struct{}{}, nil
	})
	return err
}

// Posted returns how many times accounting was notified per invoice, sorted.
func (b *Billing) Posted() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for k, v := range b.posted {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(out)
	return out
}

// Quote asks a provider for a price. It declares no entity: the scheduler
// then assumes it may touch anything and explores every order of it.
//
//agentidem:read name=quote
func (b *Billing) Quote(ctx context.Context, provider string) (int, error) {
	return len(provider) * 10, nil
}
