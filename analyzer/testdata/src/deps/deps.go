package deps

import (
	"context"
	"sync"

	"billing"
	"syncutil"

	"golang.org/x/sync/errgroup"
)

// Local ops, declared and used in one package.

//agentidem:write identity=id
func createOrder(id string) error { return nil }

//agentidem:write identity=id after=createOrder
func shipOrder(id string) error { return nil }

func errgroupBatch(ctx context.Context, id string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, id) }) // want `AttachInvoice is declared after=CreateInvoice but both start in one concurrent batch`
	return g.Wait()
}

func errgroupWaitBetween(ctx context.Context, id string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	if err := g.Wait(); err != nil {
		return err
	}
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, id) })
	return g.Wait()
}

func sequential(ctx context.Context, id string) error {
	if err := billing.CreateInvoiceTraced(ctx, id); err != nil {
		return err
	}
	return billing.AttachInvoiceTraced(ctx, id)
}

func oneGoroutineInOrder(ctx context.Context, id string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := billing.CreateInvoiceTraced(ctx, id); err != nil {
			return err
		}
		return billing.AttachInvoiceTraced(ctx, id)
	})
	return g.Wait()
}

func goStatements(id string) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); shipOrder(id) }() // want `shipOrder is declared after=createOrder`
	go func() { defer wg.Done(); createOrder(id) }()
	wg.Wait()
}

func goStatementsWaitBetween(id string) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); createOrder(id) }()
	wg.Wait()
	wg.Add(1)
	go func() { defer wg.Done(); shipOrder(id) }()
	wg.Wait()
}

func waitGroupGo(id string) {
	var wg sync.WaitGroup
	wg.Go(func() { createOrder(id) })
	wg.Go(func() { shipOrder(id) }) // want `shipOrder is declared after=createOrder`
	wg.Wait()
}

func starterRunsMeanwhile(ctx context.Context, id string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	billing.AttachInvoiceTraced(ctx, id) // want `AttachInvoice is declared after=CreateInvoice`
	return g.Wait()
}

func starterBeforeLaunch(ctx context.Context, id string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return nil })
	billing.CreateInvoiceTraced(ctx, id)
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, id) })
	return g.Wait()
}

func throughClosure(ctx context.Context, id string) error {
	attach := func() error { return billing.AttachInvoiceTraced(ctx, id) } // want `AttachInvoice is declared after=CreateInvoice`
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	g.Go(attach)
	return g.Wait()
}

func channelOrders(ctx context.Context, id string) {
	created := make(chan struct{})
	go func() { createOrder(id); close(created) }()
	go func() { <-created; shipOrder(id) }()
}

// otel/examples/production's Bill: the calls in order, or (the seeded
// bug, behind a flag the linter cannot read) both at once, each in a
// goroutine of its own that stores its error. The bug path is reported;
// the example silences its line with //agentidem:ignore, so this case is
// what shows the finding still fires.
func billBehindAFlag(ctx context.Context, id string, parallel bool) error {
	if !parallel {
		if err := billing.CreateInvoiceTraced(ctx, id); err != nil {
			return err
		}
		return billing.AttachInvoiceTraced(ctx, id)
	}
	var wg sync.WaitGroup
	var errs [2]error
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = billing.CreateInvoiceTraced(ctx, id) }()
	go func() { defer wg.Done(); errs[1] = billing.AttachInvoiceTraced(ctx, id) }() // want `AttachInvoice is declared after=CreateInvoice but both start in one concurrent batch`
	wg.Wait()
	if errs[0] != nil {
		return errs[0]
	}
	return errs[1]
}

func ignored(id string) {
	var wg sync.WaitGroup
	wg.Go(func() { createOrder(id) })
	//agentidem:ignore shipOrder only reads what createOrder wrote, and retries until it is there
	wg.Go(func() { shipOrder(id) })
	wg.Wait()
}

// A literal stored for later does not run in the batch.
func storedForLater(ctx context.Context, id string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	later := func() error { return billing.AttachInvoiceTraced(ctx, id) }
	if err := g.Wait(); err != nil {
		return err
	}
	return later()
}

// A literal called right away runs in the batch.
func calledNow(ctx context.Context, id string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	err := func() error { return billing.AttachInvoiceTraced(ctx, id) }() // want `AttachInvoice is declared after=CreateInvoice`
	if err != nil {
		return err
	}
	return g.Wait()
}

// sequentially runs calls one after the other: not a fan-out.
func sequentially(calls ...func() error) error {
	for _, c := range calls {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

// both runs two calls at once.
func both(a, b func() error) {
	var wg sync.WaitGroup
	wg.Go(func() { a() })
	wg.Go(func() { b() })
	wg.Wait()
}

func fanOutHelper(ctx context.Context, id string) []error {
	create := func() error { return billing.CreateInvoiceTraced(ctx, id) }
	attach := func() error { return billing.AttachInvoiceTraced(ctx, id) } // want `AttachInvoice is declared after=CreateInvoice`
	return billing.Parallel(create, attach)
}

func localFanOut(id string) {
	both(func() error { return createOrder(id) }, func() error { return shipOrder(id) }) // want `shipOrder is declared after=createOrder`
}

func sequentialHelper(ctx context.Context, id string) error {
	create := func() error { return billing.CreateInvoiceTraced(ctx, id) }
	attach := func() error { return billing.AttachInvoiceTraced(ctx, id) }
	return sequentially(create, attach)
}

// oneByOne starts each call in a goroutine but waits for it before the
// next: sequential, not a fan-out.
func oneByOne(calls ...func() error) {
	for _, call := range calls {
		done := make(chan struct{})
		go func() { call(); close(done) }()
		<-done
	}
}

// waitBetween starts a, waits, then starts b.
func waitBetween(a, b func() error) {
	var wg sync.WaitGroup
	wg.Go(func() { a() })
	wg.Wait()
	wg.Go(func() { b() })
	wg.Wait()
}

func sequentialThroughGoroutines(ctx context.Context, id string) {
	create := func() error { return billing.CreateInvoiceTraced(ctx, id) }
	attach := func() error { return billing.AttachInvoiceTraced(ctx, id) }
	oneByOne(create, attach)
	waitBetween(create, attach)
}

// A group limited to one goroutine runs its calls one after the other.
func limitedGroup(ctx context.Context, id string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(1)
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, id) })
	return g.Wait()
}

// Two orders processed at once, each its invoice created and then
// attached: an attach depends on its own order's create, not on the one
// beside it.
func twoPipelines(ctx context.Context, a, b string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := billing.CreateInvoiceTraced(ctx, a); err != nil {
			return err
		}
		return billing.AttachInvoiceTraced(ctx, a)
	})
	g.Go(func() error {
		if err := billing.CreateInvoiceTraced(ctx, b); err != nil {
			return err
		}
		return billing.AttachInvoiceTraced(ctx, b)
	})
	return g.Wait()
}

// The invoice of the last order was created a turn before: its attach
// beside the creation of the next order's.
func attachPreviousBesideNext(ctx context.Context, prev, next string) error {
	if err := billing.CreateInvoiceTraced(ctx, prev); err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, prev) })
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, next) })
	return g.Wait()
}

// waitFor waits for the group's goroutines: a wait, through a helper.
func waitFor(g *errgroup.Group) error { return g.Wait() }

func waitThroughAHelper(ctx context.Context, id string) error {
	var g errgroup.Group
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	if err := waitFor(&g); err != nil {
		return err
	}
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, id) })
	return g.Wait()
}

// A wait through a helper of another package (a red team's false
// positive: only the package's own helpers were seen to wait).
func waitThroughAnotherPackagesHelper(ctx context.Context, id string) error {
	var g errgroup.Group
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	if err := syncutil.WaitAll(&g); err != nil {
		return err
	}
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, id) })
	return g.Wait()
}

// A wait through a local closure (a red team's false positive).
func waitThroughALocalClosure(ctx context.Context, id string) error {
	var g errgroup.Group
	wait := func() error { return g.Wait() }
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	if err := wait(); err != nil {
		return err
	}
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, id) })
	return g.Wait()
}

// A helper of another package that locks only a mutex of its own orders
// nothing between the calls beside it.
func lockOfAnotherPackageOrdersNothing(ctx context.Context, id string) error {
	var g errgroup.Group
	var c syncutil.Counter
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	c.Add()
	syncutil.Log("created")
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, id) }) // want `AttachInvoice is declared after=CreateInvoice`
	return g.Wait()
}

// A group limited to one goroutine only when serial: otherwise its calls
// run at once (a red team's miss: any SetLimit(1) counted).
func conditionallyLimitedGroup(ctx context.Context, id string, serial bool) error {
	g, ctx := errgroup.WithContext(ctx)
	if serial {
		g.SetLimit(1)
	}
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, id) }) // want `AttachInvoice is declared after=CreateInvoice`
	return g.Wait()
}

// Every goroutine makes sure of the invoice first, once: sync.Once's Do
// returns when the create has.
func onceBeforeAttach(ctx context.Context, id string) error {
	var once sync.Once
	ensure := func() { once.Do(func() { billing.CreateInvoiceTraced(ctx, id) }) }
	var g errgroup.Group
	g.Go(func() error { ensure(); return nil })
	g.Go(func() error { ensure(); return billing.AttachInvoiceTraced(ctx, id) })
	return g.Wait()
}

// Two orders processed at once through one local closure: each goroutine
// runs its own order's create and then attach. The closure's parameter is
// the argument of each call, a in one goroutine and b in the other.
func closurePipelines(ctx context.Context, a, b string) error {
	process := func(id string) error {
		if err := billing.CreateInvoiceTraced(ctx, id); err != nil {
			return err
		}
		return billing.AttachInvoiceTraced(ctx, id)
	}
	var wg sync.WaitGroup
	var errA, errB error
	wg.Go(func() { errA = process(a) })
	wg.Go(func() { errB = process(b) })
	wg.Wait()
	if errA != nil {
		return errA
	}
	return errB
}

// The create of an order in one goroutine, the attach of the same order in
// another, each through a closure: the attach may come first.
func closuresSplitOneOrder(ctx context.Context, a string) {
	create := func(id string) { billing.CreateInvoiceTraced(ctx, id) }
	attach := func(id string) { billing.AttachInvoiceTraced(ctx, id) } // want `AttachInvoice is declared after=CreateInvoice`
	var wg sync.WaitGroup
	wg.Go(func() { create(a) })
	wg.Go(func() { attach(a) })
	wg.Wait()
}

// A closure that changes its parameter before the call: the argument no
// longer tells which order the call is on, so the pair is reported.
func closureRebindsParam(ctx context.Context, a, b string) {
	create := func(id string) { billing.CreateInvoiceTraced(ctx, id) }
	attach := func(id string) {
		id = a
		billing.AttachInvoiceTraced(ctx, id) // want `AttachInvoice is declared after=CreateInvoice`
	}
	var wg sync.WaitGroup
	wg.Go(func() { create(a) })
	wg.Go(func() { attach(b) })
	wg.Wait()
}
