// Package depsorder holds the red team's concurrent-dependency shapes
// (rtM, L3): goroutines that lock, receive or select somewhere, and only
// those that wait BEFORE their call, on something the prerequisite's
// goroutine signals, are left out of the batch.
package depsorder

import (
	"context"
	"sync"
	"time"

	"billing"

	"golang.org/x/sync/errgroup"
)

// D1: a channel semaphore, released in a defer: both calls run at once.
func semaphore(ctx context.Context, id string) error {
	sem := make(chan struct{}, 4)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		sem <- struct{}{}
		defer func() { <-sem }()
		return billing.CreateInvoiceTraced(ctx, id)
	})
	g.Go(func() error {
		sem <- struct{}{}
		defer func() { <-sem }()
		return billing.AttachInvoiceTraced(ctx, id) // want `AttachInvoice is declared after=CreateInvoice but both start in one concurrent batch`
	})
	return g.Wait()
}

// D2: a mutex around each call serializes them, in either order.
func mutexAround(ctx context.Context, id string) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs [2]error
	wg.Go(func() { mu.Lock(); defer mu.Unlock(); errs[0] = billing.CreateInvoiceTraced(ctx, id) })
	wg.Go(func() { mu.Lock(); defer mu.Unlock(); errs[1] = billing.AttachInvoiceTraced(ctx, id) }) // want `AttachInvoice is declared after=CreateInvoice`
	wg.Wait()
}

// D2b: each goroutine calls its tool, then appends its error under a
// shared mutex: the most common shape.
func collectUnderMutex(ctx context.Context, id string) []error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	wg.Go(func() {
		err := billing.CreateInvoiceTraced(ctx, id)
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	})
	wg.Go(func() {
		err := billing.AttachInvoiceTraced(ctx, id) // want `AttachInvoice is declared after=CreateInvoice`
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	})
	wg.Wait()
	return errs
}

// The same through a helper of the package that locks.
type errList struct {
	mu   sync.Mutex
	errs []error
}

func (l *errList) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func collectThroughHelper(ctx context.Context, id string) {
	var l errList
	var wg sync.WaitGroup
	wg.Go(func() { l.add(billing.CreateInvoiceTraced(ctx, id)) })
	wg.Go(func() { l.add(billing.AttachInvoiceTraced(ctx, id)) }) // want `AttachInvoice is declared after=CreateInvoice`
	wg.Wait()
}

// D5: a select with a default case does not block; ctx.Done() is no
// signal of the other goroutine.
func selectDefault(ctx context.Context, id string) {
	errc := make(chan error, 2)
	go func() {
		select {
		case <-ctx.Done():
			errc <- ctx.Err()
		default:
			errc <- billing.CreateInvoiceTraced(ctx, id)
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			errc <- ctx.Err()
		default:
			errc <- billing.AttachInvoiceTraced(ctx, id) // want `AttachInvoice is declared after=CreateInvoice`
		}
	}()
	<-errc
	<-errc
}

// A receive after the call (a reply awaited) holds nothing back.
func receiveAfter(ctx context.Context, id string, acks chan struct{}) {
	go func() { _ = billing.CreateInvoiceTraced(ctx, id); acks <- struct{}{} }()
	go func() { _ = billing.AttachInvoiceTraced(ctx, id); <-acks }() // want `AttachInvoice is declared after=CreateInvoice`
}

// D1b: results sent on a channel after each call, collected by the
// starter (reported before the fix too).
func results(ctx context.Context, id string) error {
	errc := make(chan error, 2)
	go func() { errc <- billing.CreateInvoiceTraced(ctx, id) }()
	go func() { errc <- billing.AttachInvoiceTraced(ctx, id) }() // want `AttachInvoice is declared after=CreateInvoice`
	for range 2 {
		if err := <-errc; err != nil {
			return err
		}
	}
	return nil
}

// D0: the documented shape.
func plain(ctx context.Context, id string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, id) })
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, id) }) // want `AttachInvoice is declared after=CreateInvoice`
	return g.Wait()
}

// Fixed: the attach waits, before its call, on a channel the create's
// goroutine closes.
func waitsOnCreated(ctx context.Context, id string) {
	created := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var mu sync.Mutex
		mu.Lock()
		_ = billing.CreateInvoiceTraced(ctx, id)
		mu.Unlock()
		close(created)
	})
	wg.Go(func() {
		<-created
		_ = billing.AttachInvoiceTraced(ctx, id)
	})
	wg.Wait()
}

// Fixed: a select without default on the created channel (and the
// cancellation) holds the attach back.
func selectsOnCreated(ctx context.Context, id string) {
	created := make(chan struct{})
	go func() { _ = billing.CreateInvoiceTraced(ctx, id); close(created) }()
	go func() {
		select {
		case <-ctx.Done():
			return
		case <-created:
		}
		_ = billing.AttachInvoiceTraced(ctx, id)
	}()
}

// Fixed: a wait in a loop around the call precedes it from the second
// round on, and the first round's is before it too.
func waitsInLoop(ctx context.Context, id string, tick <-chan time.Time) {
	created := make(chan struct{})
	go func() { _ = billing.CreateInvoiceTraced(ctx, id); close(created) }()
	go func() {
		for {
			<-created
			_ = billing.AttachInvoiceTraced(ctx, id)
			<-tick
		}
	}()
}

// Fixed: the wait is in the closure the goroutine calls, before its call.
func waitsInClosure(ctx context.Context, id string) {
	created := make(chan struct{})
	attach := func() {
		<-created
		_ = billing.AttachInvoiceTraced(ctx, id)
	}
	go func() { _ = billing.CreateInvoiceTraced(ctx, id); close(created) }()
	go func() { attach() }()
}

// A WaitGroup the create's goroutine is part of, waited before the call.
func waitsOnGroup(ctx context.Context, id string) {
	var created sync.WaitGroup
	created.Add(1)
	go func() { defer created.Done(); _ = billing.CreateInvoiceTraced(ctx, id) }()
	go func() { created.Wait(); _ = billing.AttachInvoiceTraced(ctx, id) }()
}

// D6: create first in the starter, then attaches in goroutines.
func createThenAttaches(ctx context.Context, id string, lines []string) error {
	if err := billing.CreateInvoiceTraced(ctx, id); err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	for range lines {
		g.Go(func() error { return billing.AttachInvoiceTraced(ctx, id) })
	}
	return g.Wait()
}

// D7: one goroutine per order, each in order.
func perOrder(ctx context.Context, ids []string) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, id := range ids {
		g.Go(func() error {
			if err := billing.CreateInvoiceTraced(ctx, id); err != nil {
				return err
			}
			return billing.AttachInvoiceTraced(ctx, id)
		})
	}
	return g.Wait()
}

// D8: the starter waits on a result channel between.
func resultChan(ctx context.Context, id string) error {
	done := make(chan error, 1)
	go func() { done <- billing.CreateInvoiceTraced(ctx, id) }()
	if err := <-done; err != nil {
		return err
	}
	go func() { done <- billing.AttachInvoiceTraced(ctx, id) }()
	return <-done
}

// D9: pipelines of two orders through a closure taking the id.
func pipelines(ctx context.Context, a, c string) {
	var wg sync.WaitGroup
	process := func(id string) {
		if billing.CreateInvoiceTraced(ctx, id) == nil {
			billing.AttachInvoiceTraced(ctx, id)
		}
	}
	for _, id := range []string{a, c} {
		wg.Go(func() { process(id) })
	}
	wg.Wait()
}

// D10: the attach of prev (created before) beside the create of next.
type order struct{ ID string }

func fields(ctx context.Context, prev, next order) error {
	if err := billing.CreateInvoiceTraced(ctx, prev.ID); err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return billing.AttachInvoiceTraced(ctx, prev.ID) })
	g.Go(func() error { return billing.CreateInvoiceTraced(ctx, next.ID) })
	return g.Wait()
}

// D3 and D4 are out of the check's reach (see the package doc): calls in a
// []func dispatched in a loop, and a worker pool reading a jobs channel,
// are not followed. Nothing is reported, wrongly.
func funcList(ctx context.Context, id string) error {
	calls := []func() error{
		func() error { return billing.CreateInvoiceTraced(ctx, id) },
		func() error { return billing.AttachInvoiceTraced(ctx, id) },
	}
	g, ctx := errgroup.WithContext(ctx)
	for _, c := range calls {
		g.Go(c)
	}
	return g.Wait()
}

func workerPool(ctx context.Context, id string) {
	jobs := make(chan func() error)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for j := range jobs {
				_ = j()
			}
		})
	}
	jobs <- func() error { return billing.CreateInvoiceTraced(ctx, id) }
	jobs <- func() error { return billing.AttachInvoiceTraced(ctx, id) }
	close(jobs)
	wg.Wait()
}
