// Package depsbranch holds launches of which one runs (red team
// fF): the clauses of a switch or a select, and a branch that starts a
// goroutine and then leaves the block. Neither runs beside what follows.
package depsbranch

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

//agentidem:write identity=id
func createOrder(id string) error { return nil }

//agentidem:write identity=id after=createOrder
func shipOrder(id string) error { return nil }

// A tool call dispatched by its name: one clause runs.
func bySwitch(name, id string) {
	var wg sync.WaitGroup
	switch name {
	case "create":
		wg.Go(func() { createOrder(id) })
	case "ship":
		wg.Go(func() { shipOrder(id) })
	}
	wg.Wait()
}

func byTypeSwitch(v any, id string) {
	var wg sync.WaitGroup
	switch v.(type) {
	case int:
		go func() { createOrder(id) }()
	case string:
		go func() { shipOrder(id) }()
	}
	wg.Wait()
}

// A select's send clauses wait on nothing the batch signals, yet one runs.
func bySelect(id string, a, b chan int) {
	var wg sync.WaitGroup
	select {
	case a <- 1:
		wg.Go(func() { createOrder(id) })
	case b <- 1:
		wg.Go(func() { shipOrder(id) })
	}
	wg.Wait()
}

func returnsAfterLaunch(id string, fresh bool) {
	var wg sync.WaitGroup
	if fresh {
		wg.Go(func() { createOrder(id) })
		return
	}
	wg.Go(func() { shipOrder(id) })
	wg.Wait()
}

func continuesAfterLaunch(ctx context.Context, ids []string, fresh bool) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, id := range ids {
		if fresh {
			g.Go(func() error { return createOrder(id) })
			continue
		}
		g.Go(func() error { return shipOrder(id) })
	}
	return g.Wait()
}

func panicsAfterLaunch(id string, n int) {
	var wg sync.WaitGroup
	if n < 0 {
		wg.Go(func() { createOrder(id) })
		panic("negative")
	}
	wg.Go(func() { shipOrder(id) })
	wg.Wait()
}

func breaksOutOfLoop(ids []string, last string) {
	var wg sync.WaitGroup
	for _, id := range ids {
		if id == last {
			wg.Go(func() { createOrder(id) })
			break
		}
		wg.Go(func() { shipOrder(id) })
	}
	wg.Wait()
}

// The twins that run both: still reported.

func afterSwitch(id string, n int) {
	var wg sync.WaitGroup
	switch n {
	case 1:
		wg.Go(func() { createOrder(id) })
	}
	wg.Go(func() { shipOrder(id) }) // want `shipOrder is declared after=createOrder`
	wg.Wait()
}

func laterBranchReturns(id string, fresh bool) {
	var wg sync.WaitGroup
	wg.Go(func() { createOrder(id) })
	if fresh {
		wg.Go(func() { shipOrder(id) }) // want `shipOrder is declared after=createOrder`
		return
	}
	wg.Wait()
}

// A break out of a switch inside the branch reaches what follows.
func breakOutOfSwitch(id string, n int) {
	var wg sync.WaitGroup
	if n > 0 {
		switch n {
		case 1:
			wg.Go(func() { createOrder(id) })
			break
		}
	}
	wg.Go(func() { shipOrder(id) }) // want `shipOrder is declared after=createOrder`
	wg.Wait()
}

// A loop's continue and break inside the member stay in it: the loop's
// goroutines still run beside what follows the loop.
func continueInsideLoop(ids []string, id string) {
	var wg sync.WaitGroup
	for _, x := range ids {
		if x == "" {
			continue
		}
		wg.Go(func() { createOrder(x) })
	}
	wg.Go(func() { shipOrder(x0(ids)) }) // want `shipOrder is declared after=createOrder`
	wg.Wait()
}

func x0(ids []string) string { return ids[0] }

// A return only under a condition after the launch leaves nothing.
func returnUnderCondition(id string, fresh bool) error {
	var wg sync.WaitGroup
	if fresh {
		wg.Go(func() { createOrder(id) })
		if id == "" {
			return nil
		}
	}
	wg.Go(func() { shipOrder(id) }) // want `shipOrder is declared after=createOrder`
	wg.Wait()
	return nil
}
