package runtime

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orderDesk is SQLite's orders(id INTEGER PRIMARY KEY AUTOINCREMENT, ref
// UNIQUE, visits) and lines(id ... AUTOINCREMENT, order_id, sku, qty,
// UNIQUE(order_id, sku)) as State reads them, emptied by Setup with DELETE:
// the counters behind both ids go on counting across scenarios, as
// AUTOINCREMENT's (and a PostgreSQL sequence's) do.
type orderDesk struct {
	mu     sync.Mutex
	orders []map[string]any
	lines  []map[string]any
	// nextOrder and nextLine are the tables' counters, which reset
	// leaves alone.
	nextOrder, nextLine int
	// plain makes add_line insert a line each time: a second delivery
	// adds the line twice.
	plain bool
	meet  *rendezvous // holds each call until the other delivery's is in flight
}

func (d *orderDesk) reset() {
	d.mu.Lock()
	d.orders, d.lines = nil, nil
	d.mu.Unlock()
}

// createOrder upserts the order of ref and answers its id.
func (d *orderDesk) createOrder(ref string) int {
	d.meet.wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, o := range d.orders {
		if o["ref"] == ref {
			return o["id"].(int)
		}
	}
	d.nextOrder++
	d.orders = append(d.orders, map[string]any{"id": d.nextOrder, "ref": ref, "visits": 0})
	return d.nextOrder
}

// addLine upserts the line of sku on order (unless plain).
func (d *orderDesk) addLine(order int, sku string, qty int) {
	d.meet.wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.plain {
		for _, l := range d.lines {
			if l["order_id"] == order && l["sku"] == sku {
				l["qty"] = qty
				return
			}
		}
	}
	d.nextLine++
	d.lines = append(d.lines, map[string]any{"id": d.nextLine, "order_id": order, "sku": sku, "qty": qty})
}

// visit counts a visit on order (visits = visits + 1): no idempotency.
func (d *orderDesk) visit(order int) {
	d.meet.wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, o := range d.orders {
		if o["id"] == order {
			o["visits"] = o["visits"].(int) + 1
		}
	}
}

func (d *orderDesk) state() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	clone := func(rows []map[string]any) []any {
		out := make([]any, len(rows))
		for i, r := range rows {
			c := map[string]any{}
			for k, v := range r {
				c[k] = v
			}
			out[i] = c
		}
		return out
	}
	return map[string]any{"orders": clone(d.orders), "lines": clone(d.lines)}
}

// orderDeskAgent creates the order of ext-1, taking its id from
// create_order's answer, adds an apple and a pear line to it (a quantity
// of qty each) and, with visit, counts a visit on it; each call retried.
func orderDeskAgent(d *orderDesk, qty int, visit bool) func(context.Context) error {
	create := &Op{Name: "create_order", Kind: KindWrite, Params: []string{"ref"}}
	line := &Op{Name: "add_line", Kind: KindWrite, Params: []string{"order_id", "sku", "qty"}}
	visits := &Op{Name: "add_visit", Kind: KindWrite, Params: []string{"order_id"}}
	retry := func(f func() error) error {
		var err error
		for range 3 {
			if err = f(); err == nil || errors.Is(err, context.Canceled) {
				return err
			}
		}
		return err
	}
	return func(ctx context.Context) error {
		var id int
		if err := retry(func() error {
			c, _ := Begin(ctx, create, []any{"ext-1"}, []any{"ext-1"}, nil)
			if err := c.Start(); err != nil {
				return err
			}
			id = d.createOrder("ext-1")
			return c.Finish(nil, id)
		}); err != nil {
			return err
		}
		for _, sku := range []string{"apple", "pear"} {
			if err := retry(func() error {
				return traced(ctx, line, []any{id, sku, qty}, []any{id, sku}, func(context.Context) error {
					d.addLine(id, sku, qty)
					return nil
				})
			}); err != nil {
				return err
			}
		}
		if !visit {
			return nil
		}
		return retry(func() error {
			return traced(ctx, visits, []any{id}, []any{id}, func(context.Context) error {
				d.visit(id)
				return nil
			})
		})
	}
}

// An order whose id comes from a counter Setup does not reset (SQLite's
// AUTOINCREMENT after DELETE), answered by create_order and passed to
// add_line, which upserts the order's lines. Two deliveries at once make
// the order as 2 and the apple line as 3 where the baseline made them as 1
// and 1: the line's order_id is the sink's number, not the agent's
// choice, and the upsert did one execution's change once the number
// create_order answered is read in the baseline's where it stands as an id
// or a reference (red team, SQLite, /tmp/rt20c TestOrders/select/delete: a
// duplicate_write on every run). A line inserted twice is still caught, and
// so is a visit counted twice on the order, whose count (2) equals the
// run's order id: the count stands under no id or reference key and keeps
// its number (TestACountEqualToARenamedIDIsNoName).
func TestAnOrderNumberedPastTheBaselinesIsOneExecutionsUnderAnotherNumber(t *testing.T) {
	for _, c := range []struct {
		name         string
		plain, visit bool
		qty          int
		only         string
	}{
		{name: "upserted lines"},
		// Alone after the baseline, two deliveries at once make the
		// order as 2, the quantity passed beside it.
		{name: "upserted lines, as order 2", only: ScenarioDuplicateConcurrent},
		{name: "a line inserted each time", plain: true, only: ScenarioDuplicateConcurrent},
		{name: "a visit counted on the order", visit: true, only: ScenarioDuplicateConcurrent},
		// No number of the state but the order's id and the count is 2:
		// read in the baseline's everywhere, the count would be 1.
		{name: "a visit counted on the order, quantities of 3", visit: true, qty: 3, only: ScenarioDuplicateConcurrent},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &orderDesk{plain: c.plain, meet: &rendezvous{timeout: 5 * time.Millisecond}}
			opts := []Option{Setup(func(context.Context) error { d.reset(); return nil }), State(d.state)}
			if c.only != "" {
				opts = append(opts, OnlyScenario(c.only))
			}
			rep, err := Run(context.Background(), t.Name(), orderDeskAgent(d, cmp.Or(c.qty, 2), c.visit), opts...)
			require.NoError(t, err)
			require.True(t, rep.BaselineSucceeded)
			if c.plain || c.visit {
				assert.True(t, rep.Has(CodeDuplicateWrite), "a second line or visit stayed, yet: %v", codes(rep))
				return
			}
			for _, f := range rep.Findings {
				assert.NotEqual(t, CodeDuplicateWrite, f.Code, "%s: %s", f.Scenario, f.Message)
			}
			assert.Zero(t, rep.InconclusiveCount)
		})
	}
}
