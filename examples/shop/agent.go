package shop

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Agent buys a cart for a customer: it reads every SKU's quote in parallel
// (one model turn with several tool calls), then places one order for the
// total, retrying up to Retries more times when placing fails.
type Agent struct {
	Tools   *Client
	Retries int
	// Keyed sends an idempotency key derived from the customer and cart.
	Keyed bool
}

// Buy runs one invocation of the agent.
func (a *Agent) Buy(ctx context.Context, customer string, skus ...string) (Order, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	quotes := make([]Quote, len(skus))
	errs := make([]error, len(skus))
	var wg sync.WaitGroup
	for i, sku := range skus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			quotes[i], errs[i] = a.Tools.GetQuoteTraced(ctx, sku)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Order{}, err
	}
	total := 0
	for _, q := range quotes {
		total += q.Price
	}
	order := OrderRequest{Customer: customer, Items: skus, Total: total}
	key := ""
	if a.Keyed {
		key = cartKey(customer, skus)
	}
	var err error
	for attempt := 0; attempt <= a.Retries; attempt++ {
		var o Order
		if o, err = a.Tools.PlaceOrderTraced(ctx, order, key); err == nil {
			return o, nil
		}
		if ctx.Err() != nil {
			break // the invocation was cancelled: a crashed worker does not retry
		}
	}
	return Order{}, err
}
