// Package depsdefer holds dependent calls deferred after the Go of their
// prerequisite (red team fF): a deferred call runs as the function
// returns, after the wait that ends the batch.
package depsdefer

import (
	"context"

	"golang.org/x/sync/errgroup"
)

//agentidem:write identity=id
func createOrder(ctx context.Context, id string) error { return nil }

//agentidem:write identity=id after=createOrder
func shipOrder(ctx context.Context, id string) error { return nil }

func deferredCall(ctx context.Context, id string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return createOrder(gctx, id) })
	defer shipOrder(ctx, id)
	return g.Wait()
}

func deferredClosure(ctx context.Context, id string) (err error) {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return createOrder(gctx, id) })
	defer func() {
		if err == nil {
			err = shipOrder(ctx, id)
		}
	}()
	if err := g.Wait(); err != nil {
		return err
	}
	return nil
}

// The twin that returns without waiting: the deferred call runs while
// the create may still run.
func returnsWithoutWaiting(ctx context.Context, id string) error {
	var g errgroup.Group
	g.Go(func() error { return createOrder(ctx, id) })
	defer shipOrder(ctx, id) // want `shipOrder is declared after=createOrder but both start in one concurrent batch`
	return nil
}
