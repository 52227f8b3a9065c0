// Package cbc holds check-before-create through calls that do not name
// the op (red team fF): method values, a map of tools, an interface the
// agent holds. Each buggy shape has a twin that is not reported.
package cbc

import (
	"context"
	"errors"

	"indirect/desk"
)

// Method values bound once.
func methodValues(ctx context.Context, d *desk.Desk, id string) error {
	find := d.FindTicketTraced
	create := d.CreateTicketTraced
	_, err := find(ctx, id)
	if errors.Is(err, desk.ErrNotFound) {
		_, err = create(ctx, id, "t") // want `Desk.CreateTicket after Desk.FindTicket on the same key races`
	}
	return err
}

// The twin creates through the idempotent write: the sink deduplicates.
func methodValuesIdempotent(ctx context.Context, d *desk.Desk, id string) error {
	find := d.FindTicketTraced
	ensure := d.EnsureTicketTraced
	_, err := find(ctx, id)
	if errors.Is(err, desk.ErrNotFound) {
		_, err = ensure(ctx, id, "t")
	}
	return err
}

// A variable assigned again may hold anything when it is called.
func reassigned(ctx context.Context, d *desk.Desk, r *desk.Recorder, id string, record bool) error {
	find := d.FindTicketTraced
	if record {
		find = r.FindTicketTraced
	}
	_, err := find(ctx, id)
	if errors.Is(err, desk.ErrNotFound) {
		_, err = r.CreateTicketTraced(ctx, id, "t")
	}
	return err
}

type createFn func(ctx context.Context, id, title string) (desk.Ticket, error)

// A map of tools bound once to a literal and only read.
func toolMap(ctx context.Context, d *desk.Desk, id string) error {
	tools := map[string]createFn{"create": d.CreateTicketTraced, "ensure": d.EnsureTicketTraced}
	if _, err := d.FindTicketTraced(ctx, id); !errors.Is(err, desk.ErrNotFound) {
		return err
	}
	_, err := tools["create"](ctx, id, "t") // want `Desk.CreateTicket after Desk.FindTicket on the same key races`
	return err
}

// The twin picks the idempotent entry.
func toolMapEnsure(ctx context.Context, d *desk.Desk, id string) error {
	tools := map[string]createFn{"create": d.CreateTicketTraced, "ensure": d.EnsureTicketTraced}
	if _, err := d.FindTicketTraced(ctx, id); !errors.Is(err, desk.ErrNotFound) {
		return err
	}
	_, err := tools["ensure"](ctx, id, "t")
	return err
}

// A map whose entries change (or that is handed on, and may be changed
// there) is not read.
func toolMapChanged(ctx context.Context, d *desk.Desk, id string, override createFn) error {
	tools := map[string]createFn{"create": d.CreateTicketTraced}
	if override != nil {
		tools["create"] = override
	}
	if _, err := d.FindTicketTraced(ctx, id); !errors.Is(err, desk.ErrNotFound) {
		return err
	}
	_, err := tools["create"](ctx, id, "t")
	return err
}

// An interface the agent holds, whose one implementation in the module
// runs the tools.
type ticketDesk interface {
	FindTicketTraced(ctx context.Context, id string) (desk.Ticket, error)
	CreateTicketTraced(ctx context.Context, id, title string) (desk.Ticket, error)
	Close() error
}

func viaInterface(ctx context.Context, d ticketDesk, id string) error {
	_, err := d.FindTicketTraced(ctx, id)
	if errors.Is(err, desk.ErrNotFound) {
		_, err = d.CreateTicketTraced(ctx, id, "t") // want `Desk.CreateTicket after Desk.FindTicket on the same key races`
	}
	return err
}

// The twin checks another key: no race on one ticket.
func viaInterfaceOtherKey(ctx context.Context, d ticketDesk, id, parent string) error {
	_, err := d.FindTicketTraced(ctx, parent)
	if errors.Is(err, desk.ErrNotFound) {
		_, err = d.CreateTicketTraced(ctx, id, "t")
	}
	return err
}

// Two types of the module implement this one, and the Recorder runs no
// tool: which one the agent holds is not known, nothing is reported.
type anyDesk interface {
	FindTicketTraced(ctx context.Context, id string) (desk.Ticket, error)
	CreateTicketTraced(ctx context.Context, id, title string) (desk.Ticket, error)
}

func viaAmbiguousInterface(ctx context.Context, d anyDesk, id string) error {
	_, err := d.FindTicketTraced(ctx, id)
	if errors.Is(err, desk.ErrNotFound) {
		_, err = d.CreateTicketTraced(ctx, id, "t")
	}
	return err
}

// A method value of the interface, bound once.
func interfaceMethodValue(ctx context.Context, d ticketDesk, id string) error {
	find, create := d.FindTicketTraced, d.CreateTicketTraced
	if _, err := find(ctx, id); err == nil {
		return nil
	}
	_, err := create(ctx, id, "t") // want `Desk.CreateTicket after Desk.FindTicket on the same key races`
	return err
}
