package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/idem/sqlite"
	"github.com/agentidem/agentidem-go/runtime"
)

const cartSchema = `
CREATE TABLE IF NOT EXISTS cart_items (id INTEGER PRIMARY KEY AUTOINCREMENT, cart TEXT NOT NULL, product TEXT NOT NULL, qty INTEGER NOT NULL, UNIQUE (cart, product));
CREATE TABLE IF NOT EXISTS orders (cart TEXT PRIMARY KEY, items INTEGER NOT NULL);`

var (
	addToCartOp = &runtime.Op{Name: "add_to_cart", Kind: runtime.KindWrite, Params: []string{"cart", "product"}, Idempotent: true}
	checkoutOp  = &runtime.Op{Name: "checkout", Kind: runtime.KindWrite, Params: []string{"cart"}}
)

// pairGate lets the calls sent to it through in pairs once on: each waits
// for another to arrive; and it orders two calls (firstDone, afterFirst).
type pairGate struct {
	mu    sync.Mutex
	on    bool
	wait  chan struct{}
	first chan struct{} // closed when the first call has returned
}

func (g *pairGate) firstDone() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.on {
		close(g.first)
	}
}

func (g *pairGate) afterFirst() {
	g.mu.Lock()
	ch := g.first
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

func (g *pairGate) arrive() {
	g.mu.Lock()
	if !g.on {
		g.mu.Unlock()
		return
	}
	if g.wait == nil {
		ch := make(chan struct{})
		g.wait = ch
		g.mu.Unlock()
		<-ch
		return
	}
	close(g.wait)
	g.wait = nil
	g.mu.Unlock()
}

func tracedWrite(ctx context.Context, op *runtime.Op, args []any, fn func(context.Context) error) (err error) {
	if !runtime.Enabled() {
		return fn(ctx)
	}
	c, cctx := runtime.Begin(ctx, op, args, args, nil)
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	err = fn(cctx)
	if lost := c.Finish(err); lost != nil {
		return lost
	}
	return err
}

type cartState struct {
	CartItems [][4]any
	Orders    [][2]any
}

func readCart(db *sql.DB) any {
	var s cartState
	rows, err := db.Query(`SELECT id, cart, product, qty FROM cart_items ORDER BY id`)
	if err != nil {
		return err.Error()
	}
	for rows.Next() {
		var id, qty int64
		var cart, product string
		rows.Scan(&id, &cart, &product, &qty)
		s.CartItems = append(s.CartItems, [4]any{id, cart, product, qty})
	}
	rows.Close()
	if rows, err = db.Query(`SELECT cart, items FROM orders ORDER BY cart`); err != nil {
		return err.Error()
	}
	for rows.Next() {
		var cart string
		var n int64
		rows.Scan(&cart, &n)
		s.Orders = append(s.Orders, [2]any{cart, n})
	}
	rows.Close()
	return s
}

// A cart on SQLite: add_to_cart is an upsert keyed by product (declared
// idempotent) into a table whose row id is AUTOINCREMENT, checkout
// (undeclared) places one order per cart and deletes the cart's rows.
// Delivered twice at once, with the first checkout and the second
// add_to_cart forced to overlap, the DELETE first: the add inserts the
// row again under id 2, and the second checkout, alone, deletes it and
// places no second order. The run ends as one delivery leaves it: no
// finding (on 15ffdaa, a duplicate_write of checkout, in the runs where
// the two calls happened to overlap).
func TestCartCheckoutAfterAnOverlappedFirstCheckoutIsSafe(t *testing.T) {
	b, err := sqlite.Open(filepath.Join(t.TempDir(), "cart.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	db := b.DB()
	if _, err := db.Exec(cartSchema); err != nil {
		t.Fatal(err)
	}
	gate := &pairGate{}
	var mu sync.Mutex
	calls := map[string]int{}
	next := func(op string) int {
		mu.Lock()
		defer mu.Unlock()
		calls[op]++
		return calls[op]
	}
	agent := func(ctx context.Context) error {
		if err := tracedWrite(ctx, addToCartOp, []any{"c1", "p1"}, func(ctx context.Context) error {
			if next("add_to_cart") == 2 {
				gate.arrive() // after the first checkout's DELETE
			}
			_, err := db.ExecContext(ctx, `INSERT INTO cart_items (cart, product, qty) VALUES (?, ?, 1) ON CONFLICT (cart, product) DO UPDATE SET qty = excluded.qty`, "c1", "p1")
			return err
		}); err != nil {
			return err
		}
		// The second checkout starts once the first returned: their
		// cluster ended, and the repeat runs alone.
		n := next("checkout")
		if n == 2 {
			gate.afterFirst()
		}
		err := tracedWrite(ctx, checkoutOp, []any{"c1"}, func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, `INSERT INTO orders (cart, items) SELECT cart, COUNT(*) FROM cart_items WHERE cart = ? GROUP BY cart ON CONFLICT (cart) DO NOTHING`, "c1")
			if err == nil {
				_, err = db.ExecContext(ctx, `DELETE FROM cart_items WHERE cart = ?`, "c1")
			}
			if n == 1 {
				gate.arrive() // until the second add is in flight
			}
			return err
		})
		if n == 1 {
			gate.firstDone()
		}
		return err
	}
	s := runtime.NewSuite(t.Name(), agent,
		runtime.Setup(func(ctx context.Context) error {
			mu.Lock()
			clear(calls)
			mu.Unlock()
			_, err := db.ExecContext(ctx, `DELETE FROM cart_items; DELETE FROM orders; DELETE FROM sqlite_sequence`)
			return err
		}),
		runtime.State(func() any { return readCart(db) }))
	t.Cleanup(func() { s.Report() })
	ctx := context.Background()
	if res, err := s.Baseline(ctx); err != nil || len(res.Findings) > 0 {
		t.Fatalf("baseline: %v %v", err, res.Findings)
	}
	for _, sc := range s.Plan() {
		if sc.Kind != runtime.ScenarioDuplicateConcurrent {
			continue
		}
		gate.mu.Lock()
		gate.on, gate.first = true, make(chan struct{})
		gate.mu.Unlock()
		res, err := s.RunScenario(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		var first, repeat *runtime.Operation
		for i := range res.Trace.Ops {
			switch o := &res.Trace.Ops[i]; {
			case o.Name != "checkout":
			case o.Repeat == "":
				first = o
			default:
				repeat = o
			}
		}
		if first == nil || repeat == nil || !first.Overlapped || repeat.Overlapped || repeat.StateChange == "" {
			t.Fatalf("the forced order did not happen: first %+v, repeat %+v", first, repeat)
		}
		for _, f := range res.Findings {
			t.Errorf("%s %v: %s", f.Code, f.Ops, f.Message)
		}
		if repeat.Repeat != runtime.RepeatAbsorbed {
			t.Errorf("checkout's repeat: repeat=%q judged_by=%q, want absorbed", repeat.Repeat, repeat.JudgedBy)
		}
		return
	}
	t.Fatal("no duplicate_delivery/concurrent scenario planned")
}
