// Package deps holds dependent calls started in one batch through calls
// that do not name the op (red team fF).
package deps

import (
	"context"

	"golang.org/x/sync/errgroup"

	"indirect/desk"
)

// Method values bound once.
func methodValues(ctx context.Context, d *desk.Desk, id string) error {
	create, attach := d.CreateInvoiceTraced, d.AttachInvoiceTraced
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return create(gctx, id) })
	g.Go(func() error { return attach(gctx, id) }) // want `attachInvoice is declared after=createInvoice but both start in one concurrent batch`
	return g.Wait()
}

// The twin waits for the create.
func methodValuesInOrder(ctx context.Context, d *desk.Desk, id string) error {
	create, attach := d.CreateInvoiceTraced, d.AttachInvoiceTraced
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return create(gctx, id) })
	if err := g.Wait(); err != nil {
		return err
	}
	return attach(ctx, id)
}

type billing interface {
	CreateInvoiceTraced(ctx context.Context, orderID string) error
	AttachInvoiceTraced(ctx context.Context, orderID string) error
}

// An interface the agent holds, whose one implementation runs the tools.
func viaInterface(ctx context.Context, b billing, id string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return b.CreateInvoiceTraced(gctx, id) })
	g.Go(func() error { return b.AttachInvoiceTraced(gctx, id) }) // want `attachInvoice is declared after=createInvoice but both start in one concurrent batch`
	return g.Wait()
}

// The twin on two orders: each attach depends on its own create.
func viaInterfaceTwoOrders(ctx context.Context, b billing, a, c string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return b.CreateInvoiceTraced(gctx, a) })
	g.Go(func() error { return b.AttachInvoiceTraced(gctx, c) })
	return g.Wait()
}

type toolFn func(ctx context.Context, orderID string) error

// A map of tools bound once, entries picked by constant keys.
func toolMap(ctx context.Context, d *desk.Desk, id string) error {
	tools := map[string]toolFn{"create_invoice": d.CreateInvoiceTraced, "attach_invoice": d.AttachInvoiceTraced}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return tools["create_invoice"](gctx, id) })
	g.Go(func() error { return tools["attach_invoice"](gctx, id) }) // want `attachInvoice is declared after=createInvoice but both start in one concurrent batch`
	return g.Wait()
}

// The twin dispatches by the model's names: which entry runs is decided at
// run time, and the runtime checks judge it.
func toolMapByName(ctx context.Context, d *desk.Desk, id string, names []string) error {
	tools := map[string]toolFn{"create_invoice": d.CreateInvoiceTraced, "attach_invoice": d.AttachInvoiceTraced}
	g, gctx := errgroup.WithContext(ctx)
	for _, name := range names {
		g.Go(func() error { return tools[name](gctx, id) })
	}
	return g.Wait()
}
