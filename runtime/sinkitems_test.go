package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An agent that upserts an order (create_order answers the number a
// sequence gave it, which Setup's TRUNCATE does not restart) and adds an
// apple and a pear line under it, keyed by the order's number and the item,
// each of quantity 1, retrying a failed line once from a line of its own.
// On a fresh database the baseline's order is number 1, the quantity of
// each line: the scenario's renaming leaves 1 out (the run carries it as
// the quantity), the pear line after the apple's failed call was not read
// as the baseline's pear, and was taken for the apple's retry under a
// fresh key: identity_unstable, an error, on the first run against a fresh
// database and never again (red team, /tmp/rtP #10, rtp/sqlpg3 TestOrderLines:
// 5/5 fresh, 0/27 later). A quantity of 2, or a sequence already past 1,
// passed. A retry from the first line under a key made afresh, an order's
// number or an item the baseline never held, is still told.
func TestALineUnderAnOrderNumberedAsItsQuantityIsNoRetry(t *testing.T) {
	for _, c := range []struct {
		name  string
		start int64 // the sequence's last number when the suite starts
		qty   int
		retry string // "own": a retry from a line of its own; "fresh-sku", "fresh-order": from the first line, under a new key
		buggy bool
	}{
		{name: "fresh database, quantity 1", qty: 1, retry: "own"},
		{name: "fresh database, quantity 2", qty: 2, retry: "own"},
		{name: "sequence past 1, quantity 1", start: 40, qty: 1, retry: "own"},
		{name: "fresh database, retried under another item", qty: 1, retry: "fresh-sku", buggy: true},
		{name: "fresh database, retried under another order", qty: 1, retry: "fresh-order", buggy: true},
		{name: "sequence past 1, retried under another item", start: 40, qty: 1, retry: "fresh-sku", buggy: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			create := &Op{Name: "create_order", Kind: KindWrite, Params: []string{"ref"}}
			add := &Op{Name: "add_line", Kind: KindWrite, Params: []string{"orderID", "sku", "qty"}}
			var (
				mu     sync.Mutex
				seq    = c.start
				orders map[string]int64
				lines  map[string]int
			)
			createOrder := func(ctx context.Context, ref string) (int64, error) {
				call, _ := Begin(ctx, create, []any{ref}, []any{ref}, nil)
				if err := call.Start(); err != nil {
					return 0, err
				}
				mu.Lock()
				id, ok := orders[ref]
				if !ok {
					seq++
					id = seq
					orders[ref] = id
				}
				mu.Unlock()
				return id, call.Finish(nil, id) // RETURNING id
			}
			// The generated wrapper's shape: its caller's line is the
			// call's site, so the retry's line is not the first call's.
			addLine := func(ctx context.Context, order int64, sku string, key []any) (err error) {
				call, _ := Begin(ctx, add, []any{order, sku, c.qty}, key, nil)
				if err = call.Start(); err != nil {
					return err
				}
				defer call.Recover(&err)
				mu.Lock()
				k := fmt.Sprint(order, "/", sku)
				if _, ok := lines[k]; !ok { // ON CONFLICT (order_id, sku) DO NOTHING
					lines[k] = c.qty
				}
				mu.Unlock()
				if lost := call.Finish(nil); lost != nil {
					return lost
				}
				return nil
			}
			agent := func(ctx context.Context) error {
				id, err := createOrder(ctx, "ORD-1")
				if err != nil {
					if id, err = createOrder(ctx, "ORD-1"); err != nil {
						return err
					}
				}
				for _, sku := range []string{"apple", "pear"} {
					if c.retry == "own" {
						if err := addLine(ctx, id, sku, []any{id, sku}); err != nil {
							if err := addLine(ctx, id, sku, []any{id, sku}); err != nil {
								return err
							}
						}
						continue
					}
					for attempt := range 2 {
						key := []any{id, sku}
						if attempt > 0 && c.retry == "fresh-sku" {
							key = []any{id, sku + "-retry"}
						}
						if attempt > 0 && c.retry == "fresh-order" {
							key = []any{id + 1000, sku}
						}
						if err := addLine(ctx, id, sku, key); err == nil || ctx.Err() != nil {
							break
						}
					}
				}
				return nil
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					orders, lines = map[string]int64{}, map[string]int{} // TRUNCATE, the sequence kept
					return nil
				}),
				State(func() any {
					mu.Lock()
					defer mu.Unlock()
					return map[string]any{"orders": len(orders), "lines": len(lines)}
				}))
			require.NoError(t, err)
			var unstable []string
			for _, f := range rep.Findings {
				if f.Code == CodeIdentityUnstable && f.Severity == SeverityError {
					unstable = append(unstable, f.Scenario+": "+f.Message)
				}
			}
			if c.buggy {
				assert.NotEmpty(t, unstable, "a retry under another key passed")
				return
			}
			assert.Empty(t, unstable, "the pear line taken for the apple's retry")
		})
	}
}
