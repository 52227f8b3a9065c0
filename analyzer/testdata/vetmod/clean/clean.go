// Package clean dispatches the same calls in order.
package clean

import (
	"sync"

	"example.com/vetmod/tools"
)

// Run creates the order, waits, then ships it.
func Run(id string) {
	var wg sync.WaitGroup
	wg.Go(func() { tools.CreateOrderTraced(id) })
	wg.Wait()
	wg.Go(func() { tools.ShipOrderTraced(id) })
	wg.Wait()
}
