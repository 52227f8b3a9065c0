package writes

import (
	"context"
	"sync"

	"billing"

	"golang.org/x/sync/errgroup"
)

type order struct{ ID, Account string }

func sameEntityTwice(ctx context.Context, s *billing.Svc, o order) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.RefundTraced(ctx, o.ID, 100) })
	g.Go(func() error { return s.RefundTraced(ctx, o.ID, 250) }) // want `two Svc.Refund writes on the same entity \(o.ID\) start in one concurrent batch`
	return g.Wait()
}

func differentEntities(ctx context.Context, s *billing.Svc, a, b order) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.RefundTraced(ctx, a.ID, 100) })
	g.Go(func() error { return s.RefundTraced(ctx, b.ID, 250) })
	return g.Wait()
}

func oneAfterTheOther(ctx context.Context, s *billing.Svc, o order) error {
	if err := s.RefundTraced(ctx, o.ID, 100); err != nil {
		return err
	}
	return s.RefundTraced(ctx, o.ID, 250)
}

func waitBetween(ctx context.Context, s *billing.Svc, o order) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.RefundTraced(ctx, o.ID, 100) })
	if err := g.Wait(); err != nil {
		return err
	}
	g.Go(func() error { return s.RefundTraced(ctx, o.ID, 250) })
	return g.Wait()
}

// entity=account: charges with different keys on one account race.
func entityNotIdentity(ctx context.Context, o order) {
	var wg sync.WaitGroup
	wg.Go(func() { billing.ChargeWithTrace(ctx, o.Account, "k1") })
	wg.Go(func() { billing.ChargeWithTrace(ctx, o.Account, "k2") }) // want `two charge writes on the same entity \(o.Account\)`
	wg.Wait()
}

func constantsEqual(ctx context.Context) {
	go billing.CreateInvoiceTraced(ctx, "order-1")
	go billing.CreateInvoiceTraced(ctx, "order-1") // want `two CreateInvoice writes on the same entity`
}

func constantsDiffer(ctx context.Context) {
	go billing.CreateInvoiceTraced(ctx, "order-1")
	go billing.CreateInvoiceTraced(ctx, "order-2")
}

func freshVariablePerGoroutine(ctx context.Context, next func() string) {
	var wg sync.WaitGroup
	wg.Go(func() { id := next(); billing.CreateInvoiceTraced(ctx, id) })
	wg.Go(func() { id := next(); billing.CreateInvoiceTraced(ctx, id) })
	wg.Wait()
}

func reassignedBetween(ctx context.Context, ids []string) {
	id := ids[0]
	go billing.CreateInvoiceTraced(ctx, id)
	id = ids[1]
	go billing.CreateInvoiceTraced(ctx, id)
}

func loop(ctx context.Context, s *billing.Svc, orders []order) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, o := range orders {
		g.Go(func() error { return s.RefundTraced(ctx, o.ID, 1) })
	}
	return g.Wait()
}

func ignored(ctx context.Context, s *billing.Svc, o order) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.RefundTraced(ctx, o.ID, 100) })
	g.Go(func() error { return s.RefundTraced(ctx, o.ID, 250) }) //agentidem:ignore the payment API merges partial refunds per payment
	return g.Wait()
}

func fanOutSameEntity(ctx context.Context, s *billing.Svc, o order) []error {
	return billing.Parallel(
		func() error { return s.RefundTraced(ctx, o.ID, 100) },
		func() error { return s.RefundTraced(ctx, o.ID, 250) }, // want `two Svc.Refund writes on the same entity \(o.ID\)`
	)
}

// Two deletions of other files: the identity is the variadic parameter,
// which no one argument stands for, so the calls are not taken for one
// entity.
func deleteTwoFiles(ctx context.Context, logPath, tmpPath string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return billing.DeleteFilesTraced(ctx, logPath) })
	g.Go(func() error { return billing.DeleteFilesTraced(ctx, tmpPath) })
	return g.Wait()
}

// Through a local closure, the refund's entity is the closure's argument:
// two orders do not race, one order twice does.
func closureTwoOrders(ctx context.Context, s *billing.Svc, a, b order) {
	refund := func(o order) { s.RefundTraced(ctx, o.ID, 100) }
	var wg sync.WaitGroup
	wg.Go(func() { refund(a) })
	wg.Go(func() { refund(b) })
	wg.Wait()
}

func closureOneOrderTwice(ctx context.Context, s *billing.Svc, a order) {
	refund := func(o order) { s.RefundTraced(ctx, o.ID, 100) } // want `two Svc.Refund writes on the same entity \(o.ID\) start in one concurrent batch`
	var wg sync.WaitGroup
	wg.Go(func() { refund(a) })
	wg.Go(func() { refund(a) })
	wg.Wait()
}
