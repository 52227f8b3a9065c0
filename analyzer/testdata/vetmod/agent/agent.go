// Package agent dispatches tool calls in parallel.
package agent

import (
	"sync"

	"example.com/vetmod/tools"
)

// Run starts both calls at once.
func Run(id string) {
	var wg sync.WaitGroup
	wg.Go(func() { tools.CreateOrderTraced(id) })
	wg.Go(func() { tools.ShipOrderTraced(id) })
	wg.Wait()
}
