package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rateOp reads an exchange rate: of no entity, it orders every write of
// its round, and the exploration runs the writes in both orders.
var rateOp = &Op{Name: "rate", Kind: KindRead, Params: []string{"currency"}}

// readRate makes a traced call of rateOp.
func readRate(ctx context.Context) {
	args := []any{"EUR"}
	c, _ := Begin(ctx, rateOp, args, nil, nil)
	if c.Start() == nil {
		c.Finish(nil, 1.1)
	}
}

// Two invoices created in parallel, for acme and for globex, by a sink that
// names them from a counter: each order of the two creates ends with the
// same invoices under swapped names (INV-1 is acme's in one, globex's in
// the other). The outcome, the invoices by name, is the same up to the
// names the creates returned, and no order_variant_outcome is reported
// (it was, from 45 of 90 schedules, in a red-team's agent, where a read of
// an exchange rate, of no entity, made the exploration run both orders). An agent that
// calls whichever invoice came back first its primary one is order
// dependent, renamed or not, and is still reported.
func TestNamesTheSinkHandsOutInOrderAreNoOrderVariantOutcome(t *testing.T) {
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"customer"}}
	for _, primary := range []bool{false, true} {
		t.Run(fmt.Sprintf("primary=%v", primary), func(t *testing.T) {
			var mu sync.Mutex
			var next int
			var invoices map[string]string
			var first string
			newInvoice := func(ctx context.Context, customer string) (id string, err error) {
				args := []any{customer}
				c, _ := Begin(ctx, create, args, args, nil)
				if err := c.Start(); err != nil {
					return "", err
				}
				defer c.Recover(&err)
				mu.Lock()
				next++
				id = fmt.Sprintf("INV-%d", next)
				invoices[id] = customer
				mu.Unlock()
				return id, c.Finish(nil, id)
			}
			agent := func(ctx context.Context) error {
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, customer := range []string{"acme", "globex"} {
					wg.Go(func() {
						id, err := newInvoice(ctx, customer)
						errs[i] = err
						mu.Lock()
						if first == "" {
							first = id
						}
						mu.Unlock()
					})
				}
				wg.Go(func() { readRate(ctx) })
				wg.Wait()
				return errs[0]
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error { next, invoices, first = 0, map[string]string{}, ""; return nil }),
				Outcome(func() any {
					mu.Lock()
					defer mu.Unlock()
					out := map[string]any{"invoices": invoices}
					if primary {
						out["primary"] = invoices[first]
					}
					return out
				}))
			require.NoError(t, err)
			scheduled := 0
			for _, res := range rep.Results {
				if res.Outcome != "" {
					scheduled++
				}
			}
			require.GreaterOrEqual(t, scheduled, 2, "the exploration ran fewer than two schedules: %v", codes(rep))
			assert.Equal(t, primary, rep.Has(CodeOrderVariantOutcome), "%v", codes(rep))
		})
	}
}

// Two parallel reservations of the last seat: the first to run is
// confirmed, the other waitlisted. Each order ends with the statuses
// swapped between the customers, which is what the order decided: the
// statuses the calls returned are no names, and order_variant_outcome is
// reported. (Found by review: renaming any string two runs returned hid
// it.)
func TestStatusTheOrderDecidedIsNoName(t *testing.T) {
	reserve := &Op{Name: "reserve", Kind: KindWrite, Params: []string{"customer"}}
	var mu sync.Mutex
	var status map[string]string
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		for _, customer := range []string{"acme", "globex"} {
			wg.Go(func() {
				args := []any{customer}
				c, _ := Begin(ctx, reserve, args, args, nil)
				if c.Start() != nil {
					return
				}
				mu.Lock()
				st := "waitlisted"
				if len(status) == 0 {
					st = "confirmed"
				}
				status[customer] = st
				mu.Unlock()
				c.Finish(nil, st)
			})
		}
		wg.Go(func() { readRate(ctx) })
		wg.Wait()
		return nil
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error { status = map[string]string{}; return nil }),
		Outcome(func() any {
			mu.Lock()
			defer mu.Unlock()
			return status
		}))
	require.NoError(t, err)
	assert.True(t, rep.Has(CodeOrderVariantOutcome), "%v", codes(rep))
}
