// Package desk declares the tools the agent of package indirect calls,
// and a type with methods of the same names that are no tools.
package desk

import (
	"context"
	"errors"
)

var ErrNotFound = errors.New("not found")

type Ticket struct{ ID, Title string }

// Desk is the help desk the agent talks to.
type Desk struct{}

// FindTicket looks a ticket up.
//
//agentidem:read entity=id
func (d *Desk) FindTicket(ctx context.Context, id string) (Ticket, error) {
	return Ticket{}, ErrNotFound
}

// CreateTicket opens a ticket.
//
//agentidem:write identity=id
func (d *Desk) CreateTicket(ctx context.Context, id, title string) (Ticket, error) {
	return Ticket{ID: id}, nil
}

// EnsureTicket opens a ticket unless one with the id is there (an upsert
// at the sink).
//
//agentidem:write identity=id idempotent
func (d *Desk) EnsureTicket(ctx context.Context, id, title string) (Ticket, error) {
	return Ticket{ID: id}, nil
}

// CreateInvoice bills an order.
//
//agentidem:write identity=orderID name=createInvoice
func (d *Desk) CreateInvoice(ctx context.Context, orderID string) error { return nil }

// AttachInvoice attaches the order's invoice.
//
//agentidem:write identity=orderID name=attachInvoice after=createInvoice
func (d *Desk) AttachInvoice(ctx context.Context, orderID string) error { return nil }

func (d *Desk) Close() error { return nil }

// Refund pays an order back.
//
//agentidem:write identity=orderID
func Refund(ctx context.Context, orderID string, cents int) error { return nil }

// Weather reads the weather.
//
//agentidem:read entity=city
func Weather(ctx context.Context, city string) (string, error) { return "", nil }

// Recorder has methods named like the desk's wrappers that run no tool (a
// test double, say): an interface both implement is not resolved.
type Recorder struct{ Calls []string }

func (r *Recorder) FindTicketTraced(ctx context.Context, id string) (Ticket, error) {
	return Ticket{}, ErrNotFound
}

func (r *Recorder) CreateTicketTraced(ctx context.Context, id, title string) (Ticket, error) {
	return Ticket{ID: id}, nil
}
