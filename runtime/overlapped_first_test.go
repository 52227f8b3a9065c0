package runtime

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cartDB is a shop's two tables as the agent's SQL leaves them, read by
// State as rows: cart_items (id INTEGER PRIMARY KEY AUTOINCREMENT, cart,
// product, qty, UNIQUE (cart, product)) and orders (cart PRIMARY KEY,
// items). The AUTOINCREMENT sequence lives outside the snapshot (SQLite's
// sqlite_sequence) and starts over with the world.
type cartDB struct {
	seq atomic.Int64
}

// addToCart is INSERT INTO cart_items (cart, product, qty) VALUES (?, ?, 1)
// ON CONFLICT (cart, product) DO UPDATE SET qty = excluded.qty: an upsert
// keyed by product, where a new row takes the next id.
func (db *cartDB) addToCart(m map[string]any, cart, product string) {
	rows, _ := m["cart_items"].([]any)
	for _, r := range rows {
		if r := r.([]any); r[1] == cart && r[2] == product {
			r[3] = 1
			return
		}
	}
	m["cart_items"] = append(rows, []any{db.seq.Add(1), cart, product, 1})
}

// checkout is INSERT INTO orders (cart, items) SELECT ... ON CONFLICT (cart)
// DO NOTHING, then DELETE FROM cart_items WHERE cart = ?: one order per
// cart, and the cart emptied.
func (db *cartDB) checkout(m map[string]any, cart string) {
	rows, _ := m["cart_items"].([]any)
	var kept []any
	n := 0
	for _, r := range rows {
		if r.([]any)[1] == cart {
			n++
			continue
		}
		kept = append(kept, r)
	}
	orders, _ := m["orders"].([]any)
	placed := false
	for _, o := range orders {
		placed = placed || o.([]any)[0] == cart
	}
	if n > 0 && !placed {
		m["orders"] = append(orders, []any{cart, n})
	}
	m["cart_items"] = kept
}

// runSecondOverlapped runs an agent that calls a, then b, each once, on a
// fresh world (seeded), and returns its duplicate_delivery/concurrent
// result, where the first b and the second a meet in the tools (b's
// effect first): the first execution of b overlaps a's repeat, and b's
// repeat runs alone, once the first b returned.
func runSecondOverlapped(t *testing.T, seed func(m map[string]any), a, b step) *Result {
	t.Helper()
	w := &kvWorld{}
	meet := &barrier{}
	var counts callCounts
	agent := func(ctx context.Context) error {
		if err := traced(ctx, a.op, a.args, a.id, func(context.Context) error {
			if counts.next(a.op.Name) == 2 {
				meet.arrive() // after the first b's effect
			}
			return w.do(a.fn)
		}); err != nil {
			return err
		}
		// The second b starts once the first returned: their cluster
		// ended, and the repeat runs alone.
		n := counts.next("call " + b.op.Name)
		if n == 2 {
			meet.afterFirst()
		}
		err := traced(ctx, b.op, b.args, b.id, func(context.Context) error {
			err := w.do(b.fn)
			if n == 1 {
				meet.arrive() // until the second a is in flight
			}
			return err
		})
		if n == 1 {
			meet.firstDone()
		}
		return err
	}
	res := runConcurrentForced(t, w, seed, agent, meet, &counts)
	var first, repeat *Operation
	for i := range res.Trace.Ops {
		switch o := &res.Trace.Ops[i]; {
		case o.Name != b.op.Name:
		case o.Repeat == "":
			first = o
		default:
			repeat = o
		}
	}
	if first == nil || repeat == nil || !first.Overlapped || !repeat.stateSeen() || repeat.StateChange == "" {
		t.Fatalf("the forced order did not happen: first %+v, repeat %+v", first, repeat)
	}
	return res
}

// The cart agent adds a product (add_to_cart, an upsert declared
// idempotent) and checks out (checkout, undeclared). Delivered twice at
// once, the first checkout and the second add overlap (forced: they meet
// in the tools, the checkout's DELETE first), so the add inserts the row
// again under a new id after the cart was emptied; the second checkout,
// alone, deletes it and places no second order. The run ends as one
// delivery leaves it. No execution of checkout was seen alone before that
// repeat: what one execution does is read from the baseline, where
// checkout emptied the cart as the repeat did, from another row. That is
// a set back, judged by the end: absorbed. (It was a duplicate_write on
// 15ffdaa, in the runs where the two calls happened to overlap.)
func TestRepeatAfterAnOverlappedFirstExecutionIsComparedWithTheBaseline(t *testing.T) {
	add := &Op{Name: "add_to_cart", Kind: KindWrite, Params: []string{"cart", "product"}, Idempotent: true}
	checkout := &Op{Name: "checkout", Kind: KindWrite, Params: []string{"cart"}}
	db := &cartDB{}
	res := runSecondOverlapped(t, func(m map[string]any) {
		db.seq.Store(0)
		m["cart_items"], m["orders"] = []any{}, []any{}
	},
		step{add, []any{"c1", "p1"}, []any{"c1", "p1"}, func(m map[string]any) { db.addToCart(m, "c1", "p1") }},
		step{checkout, []any{"c1"}, []any{"c1"}, func(m map[string]any) { db.checkout(m, "c1") }})
	if got := findings(&Report{Findings: res.Findings}, ""); len(got) != 0 {
		t.Errorf("findings %v, want none: one order placed, the cart emptied, as one delivery leaves it", got)
	}
	for _, o := range res.Trace.Ops {
		if o.Repeat != "" && (o.Repeat != RepeatAbsorbed || o.JudgedBy != JudgedByEndState) {
			t.Errorf("%s: repeat=%q judged_by=%q, want absorbed by the end state", o.ID, o.Repeat, o.JudgedBy)
		}
	}
}

// The same forced overlap, where the second op's repeat is a second
// effect: compared with what one execution did in the baseline, it did it
// again (a payout made again after a deposit made again; a mail queued
// again and the outbox sent again; a note appended again), and stays a
// duplicate; an op declared idempotent that appended again, from what one
// execution left, is not_idempotent, as in duplicate_delivery/sequential.
func TestRepeatAfterAnOverlappedFirstExecutionThatDidItAgainIsADuplicate(t *testing.T) {
	dep := &Op{Name: "deposit", Kind: KindWrite, Params: []string{"acct", "amount"}}
	pay := &Op{Name: "payout", Kind: KindWrite, Params: []string{"acct", "amount"}}
	queue := &Op{Name: "queue_email", Kind: KindWrite, Params: []string{"msg_id", "to"}}
	resolve := &Op{Name: "resolve_ticket", Kind: KindWrite, Params: []string{"id"}}
	set := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"id", "status"}, Idempotent: true}
	note := &Op{Name: "add_note", Kind: KindWrite, Params: []string{"id", "body"}}
	noteIdem := &Op{Name: "add_note", Kind: KindWrite, Params: []string{"id", "body"}, Idempotent: true}
	appendNote := func(m map[string]any) {
		l, _ := m["notes"].([]any)
		m["notes"] = append(l, "t1: called the customer")
	}
	for _, c := range []struct {
		name string
		a, b step
		want string
	}{
		{"payout", step{dep, []any{"a1", 100}, []any{"a1"}, func(m map[string]any) { m["a1"] = num(m["a1"]) + 100 }},
			step{pay, []any{"a1", 100}, []any{"a1"}, func(m map[string]any) { m["a1"] = num(m["a1"]) - 100 }},
			"duplicate_write payout"},
		{"outbox", step{queue, []any{"m1", "bob"}, []any{"m1"}, func(m map[string]any) {
			ob, _ := m["outbox"].([]any)
			m["outbox"] = append(ob, "bob: your refund")
		}},
			step{resolve, []any{"t1"}, []any{"t1"}, func(m map[string]any) { m["outbox"], m["t1"] = nil, "resolved" }},
			"duplicate_write resolve_ticket"},
		{"note", step{set, []any{"t1", "open"}, []any{"t1"}, func(m map[string]any) { m["t1"] = "open" }},
			step{note, []any{"t1", "called"}, []any{"t1"}, appendNote},
			"duplicate_write add_note"},
		{"note declared idempotent", step{set, []any{"t1", "open"}, []any{"t1"}, func(m map[string]any) { m["t1"] = "open" }},
			step{noteIdem, []any{"t1", "called"}, []any{"t1"}, appendNote},
			"not_idempotent add_note"},
	} {
		res := runSecondOverlapped(t, func(map[string]any) {}, c.a, c.b)
		var got []string
		for _, f := range res.Findings {
			got = append(got, f.Code+" "+f.Ops[0])
		}
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("%s: findings %v, want %s first", c.name, got, c.want)
		}
	}
}

// A repeat seen alone that changed the state, whose first execution
// overlapped another write: with no execution of it seen alone in the
// baseline either, nothing says whether it did its effect again or set
// back what a later write changed. It counts, and the finding says why;
// with the baseline's execution, the same repeat is a set back judged by
// the end.
func TestRepeatWithNoExecutionSeenAloneSaysItCannotTell(t *testing.T) {
	trace := func() *Trace {
		return &Trace{Ops: []Operation{
			{ID: "1:checkout#1", Name: "checkout", Kind: KindWrite, Status: StatusSuccess, Identity: `"c1"`, Invocation: 1, Overlapped: true,
				Args: Args{Names: []string{"cart"}, Values: []any{"c1"}},
				more: judgedMore(&effectView{order: 2, inCluster: true, clusterKeys: 2, before: `{"cart":[[1,"p1"]],"orders":[]}`, after: `{"cart":[[2,"p1"]],"orders":[["c1",1]]}`})},
			{ID: "2:checkout#2", Name: "checkout", Kind: KindWrite, Status: StatusSuccess, Identity: `"c1"`, Invocation: 2,
				Args:        Args{Names: []string{"cart"}, Values: []any{"c1"}},
				StateChange: `cart: 1 → 0 entries, removed [2,"p1"]`,
				more:        judgedMore(&effectView{order: 4, seen: true, inCluster: true, clusterKeys: 1, before: `{"cart":[[2,"p1"]],"orders":[["c1",1]]}`, after: `{"cart":[],"orders":[["c1",1]]}`})},
		}}
	}
	end := `{"cart":[],"orders":[["c1",1]]}`

	tr := trace()
	fs := judgeRepeats(tr, end, end, map[string][2]string{}, false, false)
	require.Len(t, fs, 1, "%v", fs)
	assert.Equal(t, CodeDuplicateWrite, fs[0].Code)
	assert.Equal(t, []string{"1:checkout#1", "2:checkout#2"}, fs[0].Calls)
	assert.Contains(t, fs[0].Message, unseenFirstNote)

	tr = trace()
	baseWin := map[string][2]string{"checkout\x00\"c1\"\x00{\"cart\":\"c1\"}": {`{"cart":[[1,"p1"]],"orders":[]}`, end}}
	fs = judgeRepeats(tr, end, end, baseWin, false, false)
	assert.Empty(t, fs)
	assert.Equal(t, RepeatAbsorbed, tr.Ops[1].Repeat)
	assert.Equal(t, JudgedByEndState, tr.Ops[1].JudgedBy)
}

// The outbox with ids (id INTEGER PRIMARY KEY AUTOINCREMENT): queue_mail
// inserts the receipt, send_outbox sends what is queued (over SMTP,
// outside the snapshot) and deletes the rows. With the same forced
// overlap, the second queue_mail inserts the receipt again, under id 2,
// after the first send emptied the outbox, and the second send, alone,
// sends it and deletes it: the receipt went out twice, and the run ends as
// one delivery leaves it. The send's repeat did, from another row, all
// that one execution does in the baseline: that is no sign of a set back
// (unlike the checkout, whose execution in the baseline also placed the
// order that its repeat did not place again), and it counts. On 311b01a
// it was taken for a set back and absorbed by the end state: no finding.
func TestRepeatThatDidAllOneExecutionDoesFromAnotherRowCounts(t *testing.T) {
	queue := &Op{Name: "queue_mail", Kind: KindWrite, Params: []string{"msg", "to"}}
	send := &Op{Name: "send_outbox", Kind: KindWrite, Params: []string{"box"}}
	var seq atomic.Int64
	res := runSecondOverlapped(t, func(m map[string]any) {
		seq.Store(0)
		m["outbox"] = []any{}
	},
		step{queue, []any{"m1", "bob"}, []any{"m1"}, func(m map[string]any) {
			ob, _ := m["outbox"].([]any)
			m["outbox"] = append(ob, []any{seq.Add(1), "bob", "your receipt"})
		}},
		step{send, []any{"out"}, []any{"out"}, func(m map[string]any) { m["outbox"] = []any{} }})
	require.Len(t, res.Findings, 1, "%v", findings(&Report{Findings: res.Findings}, ""))
	f := res.Findings[0]
	assert.Equal(t, CodeDuplicateWrite, f.Code)
	assert.Equal(t, []string{"send_outbox"}, f.Ops)
	assert.Contains(t, f.Message, wholeNote)
}
