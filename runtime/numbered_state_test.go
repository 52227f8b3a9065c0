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
	// customer seeds a customer as row 1 and gives each order its
	// customer_id (a row 1 of another table beside the baseline's order
	// 1); turn is the next staff member assign_next gives an order (1, 2,
	// 3 in turn), which Setup resets.
	customer bool
	turn     int
	// lineInStep numbers each order's first line with the order's own
	// number (the two counters in step); cursor is
	// the order a cursor points at (advance_cursor), 0 for none, and
	// current is a customer's current_order_id (set_current).
	lineInStep bool
	cursor     int
	current    int
	// invoice makes each order's invoice with it, numbered from 101 by a
	// counter of its own, under the order's order_id.
	invoice     bool
	invoices    []map[string]any
	nextInvoice int
	// qtyInIdentity makes add_line's identity [order_id, sku, qty].
	qtyInIdentity bool
	meet          *rendezvous // holds each call until the other delivery's is in flight
}

func (d *orderDesk) reset() {
	d.mu.Lock()
	d.orders, d.lines, d.turn, d.cursor, d.current, d.invoices = nil, nil, 0, 0, 0, nil
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
	o := map[string]any{"id": d.nextOrder, "ref": ref, "visits": 0, "stage_id": 5}
	if d.customer {
		o["customer_id"] = 1
	}
	d.orders = append(d.orders, o)
	if d.invoice {
		d.nextInvoice++
		d.invoices = append(d.invoices, map[string]any{"id": 100 + d.nextInvoice, "order_id": d.nextOrder, "sent": false})
	}
	return d.nextOrder
}

// advanceStage moves order to its next stage (stage_id = stage_id + 1:
// no idempotency) and answers the order as it reads it back once the
// other delivery's call has run too. The stages are reference data, out of
// State.
func (d *orderDesk) advanceStage(order int) map[string]any {
	d.meet.wait()
	d.mu.Lock()
	for _, o := range d.orders {
		if o["id"] == order {
			o["stage_id"] = o["stage_id"].(int) + 1
		}
	}
	d.mu.Unlock()
	d.meet.wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, o := range d.orders {
		if o["id"] == order {
			return map[string]any{"id": order, "stage_id": o["stage_id"]}
		}
	}
	return nil
}

// assignNext gives order the next staff member in turn: no idempotency.
func (d *orderDesk) assignNext(order int) {
	d.meet.wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.turn = d.turn%3 + 1
	for _, o := range d.orders {
		if o["id"] == order {
			o["assignee_id"] = d.turn
		}
	}
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
	if d.lineInStep && sku == "apple" {
		d.nextLine = order - 1 // the order's first line takes its number
	}
	d.nextLine++
	d.lines = append(d.lines, map[string]any{"id": d.nextLine, "order_id": order, "sku": sku, "qty": qty})
}

// advanceCursor moves the cursor to the order after the one it points at
// (no idempotency) and answers the order it reads back once the other
// delivery's call has run too.
func (d *orderDesk) advanceCursor() int {
	d.meet.wait()
	d.mu.Lock()
	for _, o := range d.orders {
		if id := o["id"].(int); id > d.cursor {
			d.cursor = id
			break
		}
	}
	d.mu.Unlock()
	d.meet.wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cursor
}

// setCurrent points the customer's current order at order (a set).
func (d *orderDesk) setCurrent(order int) {
	d.meet.wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.current = order
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
	st := map[string]any{"orders": clone(d.orders), "lines": clone(d.lines)}
	if d.customer {
		st["customers"] = []any{map[string]any{"id": 1, "name": "acme", "current_order_id": d.current}}
	}
	if d.invoice {
		st["invoices"] = clone(d.invoices)
	}
	if d.cursor != 0 {
		st["cursors"] = []any{map[string]any{"id": 1, "name": "main", "order_id": d.cursor}}
	}
	return st
}

// orderDeskAgent creates the order of ext-1, taking its id from
// create_order's answer, adds an apple and a pear line to it (a quantity
// of qty each) and, with visit, counts a visit on it; each call retried.
func orderDeskAgent(d *orderDesk, qty int, then string) func(context.Context) error {
	create := &Op{Name: "create_order", Kind: KindWrite, Params: []string{"ref"}}
	line := &Op{Name: "add_line", Kind: KindWrite, Params: []string{"order_id", "sku", "qty"}}
	visits := &Op{Name: "add_visit", Kind: KindWrite, Params: []string{"order_id"}}
	stage := &Op{Name: "advance_stage", Kind: KindWrite, Params: []string{"ref"}}
	assign := &Op{Name: "assign_next", Kind: KindWrite, Params: []string{"order_id"}}
	current := &Op{Name: "set_current", Kind: KindWrite, Params: []string{"customer_id", "order_id"}, Idempotent: true}
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
				identity := []any{id, sku}
				if d.qtyInIdentity {
					identity = append(identity, qty)
				}
				return traced(ctx, line, []any{id, sku, qty}, identity, func(context.Context) error {
					d.addLine(id, sku, qty)
					return nil
				})
			}); err != nil {
				return err
			}
		}
		switch then {
		case "visit":
			return retry(func() error {
				return traced(ctx, visits, []any{id}, []any{id}, func(context.Context) error {
					d.visit(id)
					return nil
				})
			})
		case "stage":
			return retry(func() error {
				c, _ := Begin(ctx, stage, []any{"ext-1"}, []any{"ext-1"}, nil)
				if err := c.Start(); err != nil {
					return err
				}
				return c.Finish(nil, d.advanceStage(id))
			})
		case "assign":
			return retry(func() error {
				return traced(ctx, assign, []any{id}, []any{id}, func(context.Context) error {
					d.assignNext(id)
					return nil
				})
			})
		case "current":
			return retry(func() error {
				return traced(ctx, current, []any{1, id}, []any{1}, func(context.Context) error {
					d.setCurrent(id)
					return nil
				})
			})
		}
		return nil
	}
}

// cursorAgent makes two orders without an answer and moves the cursor on
// to the next one (advance_cursor, no idempotency), which answers the
// order it reads back.
func cursorAgent(d *orderDesk) func(context.Context) error {
	create := &Op{Name: "create_order", Kind: KindWrite, Params: []string{"ref"}}
	cursor := &Op{Name: "advance_cursor", Kind: KindWrite, Params: []string{"name"}}
	return func(ctx context.Context) error {
		for _, ref := range []string{"ext-1", "ext-2"} {
			if err := traced(ctx, create, []any{ref}, []any{ref}, func(context.Context) error {
				d.createOrder(ref)
				return nil
			}); err != nil {
				return err
			}
		}
		c, _ := Begin(ctx, cursor, []any{"main"}, []any{"main"}, nil)
		if err := c.Start(); err != nil {
			return err
		}
		return c.Finish(nil, d.advanceCursor())
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
// its number (TestACountEqualToARenamedIDIsNoName). So are a stage
// advanced twice and an assignee given twice, which a first version that
// renamed numbers by key alone passed as safe: a number is renamed only as
// the id of a row of its table, or a reference to that table.
func TestAnOrderNumberedPastTheBaselinesIsOneExecutionsUnderAnotherNumber(t *testing.T) {
	for _, c := range []struct {
		name                        string
		plain, customer, lineInStep bool
		invoice, qtyInIdentity      bool
		then                        string // a write after the lines: visit, stage, assign
		qty                         int
		only                        string
	}{
		{name: "upserted lines"},
		// Alone after the baseline, two deliveries at once make the
		// order as 2, the quantity passed beside it.
		{name: "upserted lines, as order 2", only: ScenarioDuplicateConcurrent},
		// A customer seeded as row 1 (customer_id 1 in each order) beside
		// the baseline's order 1: the run's own 1 names a customer, no
		// order (red team, /tmp/rt32 p2: a duplicate_write on every run).
		{name: "upserted lines, a customer seeded as row 1", customer: true},
		// The customer's current order set to the order (a set): a
		// current_order_id refers to orders (red team, /tmp/rt33 c4).
		{name: "upserted lines, the customer's current order set", customer: true, then: "current"},
		// Lines numbered in step with their orders: both ends number a
		// row of orders and of lines alike, and the window of
		// create_order says which it made (red team, /tmp/rt33 c1).
		{name: "upserted lines, their counter in step", lineInStep: true, qty: 3},
		// create_order makes the order's invoice too, under its order_id:
		// two deliveries at once made order 2 and invoice 102 where one
		// execution made order 1 and invoice 101 (red team, /tmp/rt34 c1:
		// a duplicate_write of create_order, also before any renaming).
		{name: "an order made with its invoice", invoice: true, only: ScenarioDuplicateConcurrent},
		// add_line's identity holds the quantity, 2, beside the run's
		// order 2: which of the two is the order the identity does not
		// say, and read both as order 1 it matched no call of the
		// baseline's (red team, /tmp/rt33 P4: a duplicate_write on every
		// run).
		{name: "upserted lines, the identity holding the quantity, as order 2", qtyInIdentity: true, only: ScenarioDuplicateConcurrent},
		{name: "a line inserted each time", plain: true, only: ScenarioDuplicateConcurrent},
		{name: "a line inserted each time, the identity holding the quantity", plain: true, qtyInIdentity: true, only: ScenarioDuplicateConcurrent},
		{name: "a visit counted on the order", then: "visit", only: ScenarioDuplicateConcurrent},
		// No number of the state but the order's id and the count is 2:
		// read in the baseline's everywhere, the count would be 1.
		{name: "a visit counted on the order, quantities of 3", then: "visit", qty: 3, only: ScenarioDuplicateConcurrent},
		// The stage advanced twice, both deliveries reading back 7 where
		// the baseline's read 6: a number under an id key that names no
		// row the run made (red team, /tmp/rt32 p1: paired 7 with 6, the
		// duplicate passed on every run).
		{name: "a stage advanced twice, read back", then: "stage", only: ScenarioDuplicateConcurrent},
		// The next staff member given twice: assignee 2, where the
		// baseline's was 1, beside the run's order 2 (red team, /tmp/rt32
		// p4: the assignee was read as the baseline's 1).
		{name: "an assignee given in turn twice, as order 2", then: "assign", only: ScenarioDuplicateConcurrent},
		// A cursor moved on twice to the next order, which both
		// deliveries read back: an order's id, but not the row the
		// cursor's call made (red team, /tmp/rt33 p2: the cursor's
		// second order was read as the baseline's first).
		{name: "a cursor moved on twice, read back", then: "cursor", only: ScenarioDuplicateConcurrent},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &orderDesk{plain: c.plain, customer: c.customer, lineInStep: c.lineInStep, invoice: c.invoice, qtyInIdentity: c.qtyInIdentity, meet: &rendezvous{timeout: 5 * time.Millisecond}}
			opts := []Option{Setup(func(context.Context) error { d.reset(); return nil }), State(d.state)}
			if c.only != "" {
				opts = append(opts, OnlyScenario(c.only))
			}
			agent := orderDeskAgent(d, cmp.Or(c.qty, 2), c.then)
			if c.then == "cursor" {
				agent = cursorAgent(d)
			}
			rep, err := Run(context.Background(), t.Name(), agent, opts...)
			require.NoError(t, err)
			require.True(t, rep.BaselineSucceeded)
			if c.plain || c.then != "" && c.then != "current" {
				assert.True(t, rep.Has(CodeDuplicateWrite), "a second line, visit, stage or assignee stayed, yet: %v", codes(rep))
				return
			}
			for _, f := range rep.Findings {
				assert.NotEqual(t, CodeDuplicateWrite, f.Code, "%s: %s", f.Scenario, f.Message)
			}
			assert.Zero(t, rep.InconclusiveCount)
		})
	}
}
