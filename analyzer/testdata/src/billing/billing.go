// Package billing declares annotated tool functions; other test packages
// call them, so their ops reach those packages as facts.
package billing

import (
	"billingstore"
	"context"
	"errors"
)

var ErrNotFound = errors.New("not found")

type Ticket struct{ ID, Key string }

// FindTicket looks a ticket up by its key.
//
//agentidem:read entity=key
func FindTicket(ctx context.Context, key string) (*Ticket, error) { return nil, ErrNotFound }

// LookupTicket reports whether a ticket exists.
//
//agentidem:read
func LookupTicket(key string) (Ticket, bool) { return Ticket{}, false }

// CreateTicket opens a ticket.
//
//agentidem:write identity=key
func CreateTicket(ctx context.Context, key, title string) (*Ticket, error) { return nil, nil }

// CreateInvoice bills an order.
//
//agentidem:write identity=orderID
func CreateInvoice(ctx context.Context, orderID string) error { return nil }

// AttachInvoice attaches the order's invoice to the customer.
//
//agentidem:write identity=orderID after=CreateInvoice
func AttachInvoice(ctx context.Context, orderID string) error { return nil }

// Svc is a payment service.
type Svc struct{}

// Refund refunds a payment.
//
//agentidem:write identity=paymentID
func (s *Svc) Refund(ctx context.Context, paymentID string, cents int) error { return nil }

// Charge charges a payment with a caller-chosen idempotency key.
//
//agentidem:write identity=key entity=account name=charge wrapper=ChargeWithTrace
func Charge(ctx context.Context, account, key string) error { return nil }

// Subscribe is idempotent at its sink.
//
//agentidem:write identity=email
func Subscribe(ctx context.Context, email string) error {
	_ = "INSERT INTO subscribers (email) VALUES ($1) ON CONFLICT DO NOTHING"
	return nil
}

// subscribeQuery resolves its conflict; SubscribeConst runs it from the
// constant, as code that keeps its queries apart does.
const subscribeQuery = "INSERT INTO subscribers (email) VALUES ($1) ON CONFLICT (email) DO NOTHING"

// SubscribeConst is idempotent at its sink, through a constant query.
//
//agentidem:write identity=email
func SubscribeConst(ctx context.Context, email string) error {
	_ = subscribeQuery
	return nil
}

// TicketExists answers whether the ticket is there, and an error only
// when it could not tell.
//
//agentidem:read
func TicketExists(ctx context.Context, key string) (bool, error) { return false, nil }

// SubscribeViaStore is idempotent at its sink, in a store of another
// package (billingstore.InsertIfAbsent: ON CONFLICT DO NOTHING).
//
//agentidem:write identity=email
func SubscribeViaStore(ctx context.Context, email string) error {
	return billingstore.InsertIfAbsent(ctx, email)
}

// SubscribeViaHelper is idempotent at its sink, through a helper of this
// package that runs a constant query.
//
//agentidem:write identity=email
func SubscribeViaHelper(ctx context.Context, email string) error {
	return subscribeHelper(ctx, email)
}

func subscribeHelper(ctx context.Context, email string) error {
	_ = subscribeQuery
	return nil
}

// SubscribePlainViaStore is not: the store's plain INSERT adds a row per
// call.
//
//agentidem:write identity=email
func SubscribePlainViaStore(ctx context.Context, email string) error {
	return billingstore.Insert(ctx, email)
}

// DeleteFiles removes the files at paths, one identity per call.
//
//agentidem:write identity=paths
func DeleteFiles(ctx context.Context, paths ...string) error { return nil }

// Box is a store of values of any type, with generic methods.
type Box[T any] struct{}

//agentidem:read
func (b *Box[T]) Get(ctx context.Context, key string) (T, bool) { var z T; return z, false }

//agentidem:write identity=key
func (b *Box[T]) Set(ctx context.Context, key string, v T) error { return nil }

// Parallel runs calls concurrently, as agent runtimes run the tool calls of
// one model turn.
func Parallel(calls ...func() error) []error {
	errs := make([]error, len(calls))
	done := make(chan struct{})
	for i, call := range calls {
		go func() {
			errs[i] = call()
			done <- struct{}{}
		}()
	}
	for range calls {
		<-done
	}
	return errs
}

// EnsureTicket opens the ticket unless one exists under the key: declared
// idempotent, a repeat changes nothing.
//
//agentidem:write identity=key idempotent
func EnsureTicket(ctx context.Context, key, title string) (*Ticket, error) { return nil, nil }
