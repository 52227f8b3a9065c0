package runtime

import (
	"maps"
	"slices"
	"sort"
	"testing"
)

// setRow sets a row of a table read as SELECT status, id FROM t ORDER BY
// id: the first column is the status, not the key.
func setRow(m map[string]any, table, id, status string) {
	rows, _ := m[table].([]any)
	out := []any{}
	found := false
	for _, r := range rows {
		r := r.([]any)
		if r[1] == id {
			r = []any{status, id}
			found = true
		}
		out = append(out, r)
	}
	if !found {
		out = append(out, []any{status, id})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].([]any)[1].(string) < out[j].([]any)[1].(string) })
	m[table] = out
}

func statusOf(m map[string]any, table, id string) string {
	rows, _ := m[table].([]any)
	for _, r := range rows {
		if r := r.([]any); r[1] == id {
			return r[0].(string)
		}
	}
	return ""
}

// TestShipAgainAfterASetBackOfAStatusFirstRowIsAbsorbed is
// TestShipAgainAfterASetBackOfTheRowIsAbsorbed with the columns read in
// the other order (SELECT status, id): nothing else differs.
func TestShipAgainAfterASetBackOfAStatusFirstRowIsAbsorbed(t *testing.T) {
	set := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"order", "status"}, Idempotent: true}
	ship := &Op{Name: "ship", Kind: KindWrite, Params: []string{"order"}}
	rep := runKV(t, nil, func(w *kvWorld) []step {
		return []step{
			{set, []any{"o1", "paid"}, []any{"o1"}, func(m map[string]any) { setRow(m, "orders", "o1", "paid") }},
			{ship, []any{"o1"}, []any{"o1"}, func(m map[string]any) {
				setRow(m, "orders", "o1", "shipped")
				if m["shipments"] == nil {
					m["shipments"] = []any{"o1"}
				}
			}},
		}
	})
	if !rep.Safe {
		t.Fatalf("findings: %v", findings(rep, ""))
	}
}

// TestTicketLeftOpenForGoodIsFoundWhenStatusesRepeatAtTheEnd: tickets read
// as SELECT status, id. archive_ticket archives once (the sink remembers);
// a crash after it redelivers set_status(t1, open), which stays: t1 ends
// open where one delivery archives it. Both ends hold two rows with one
// status, so the table is not keyed there.
func TestTicketLeftOpenForGoodIsFoundWhenStatusesRepeatAtTheEnd(t *testing.T) {
	set := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"id", "status"}, Idempotent: true}
	arch := &Op{Name: "archive_ticket", Kind: KindWrite, Params: []string{"id"}, Idempotent: true}
	setTo := func(id, st string) step {
		return step{set, []any{id, st}, []any{id}, func(m map[string]any) { setRow(m, "tickets", id, st) }}
	}
	rep := runKV(t, func(m map[string]any) {
		setRow(m, "tickets", "t1", "draft")
		setRow(m, "tickets", "t2", "new")
		setRow(m, "tickets", "t3", "pending")
	}, func(w *kvWorld) []step {
		return []step{
			setTo("t1", "open"),
			{arch, []any{"t1"}, []any{"t1"}, func(m map[string]any) {
				if m["archived_once"] == nil { // the sink archives a ticket once
					setRow(m, "tickets", "t1", "archived")
					m["archived_once"] = true
				}
			}},
			setTo("t2", "archived"),
			setTo("t3", "open"),
		}
	})
	sc := "crash_restart/archive_ticket#1"
	if got := findings(rep, sc); len(got) == 0 {
		t.Fatalf("%s: t1 ends open where one delivery archives it, and no finding", sc)
	}
}

// TestShipAgainAfterASetBackOfAOneColumnRowIsAbsorbed: the order's status
// read as SELECT status FROM orders WHERE id = 'o1' (rows of one column).
func TestShipAgainAfterASetBackOfAOneColumnRowIsAbsorbed(t *testing.T) {
	set := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"order", "status"}, Idempotent: true}
	ship := &Op{Name: "ship", Kind: KindWrite, Params: []string{"order"}}
	rep := runKV(t, nil, func(w *kvWorld) []step {
		return []step{
			{set, []any{"o1", "paid"}, []any{"o1"}, func(m map[string]any) { m["o1"] = []any{[]any{"paid"}} }},
			{ship, []any{"o1"}, []any{"o1"}, func(m map[string]any) {
				m["o1"] = []any{[]any{"shipped"}}
				if m["shipments"] == nil {
					m["shipments"] = []any{"o1"}
				}
			}},
		}
	})
	if !rep.Safe {
		t.Fatalf("findings: %v", findings(rep, ""))
	}
}

// TestRestockTwiceAfterTwoSalesIsNotADuplicate: sync_stock (declared
// idempotent, and it is: a second sync with nothing sold does nothing)
// logs a restock movement when stock is low. The agent sells o1, syncs,
// sells o2 (another order), syncs: two restocks, both needed. Ledger rows
// legitimately repeat.
func TestRestockTwiceAfterTwoSalesIsNotADuplicate(t *testing.T) {
	sell := &Op{Name: "sell", Kind: KindWrite, Params: []string{"order", "qty"}, Idempotent: true}
	sync := &Op{Name: "sync_stock", Kind: KindWrite, Params: []string{"warehouse"}, Idempotent: true}
	sellStep := func(order string) step {
		return step{sell, []any{order, 10}, []any{order}, func(m map[string]any) {
			sold, _ := m["sold"].([]any)
			for _, o := range sold {
				if o == order {
					return // an order is sold once (keyed at the sink)
				}
			}
			m["stock"] = num(m["stock"]) - 10
			m["sold"] = append(sold, order)
		}}
	}
	syncStep := step{sync, []any{"w1"}, []any{"w1"}, func(m map[string]any) {
		if num(m["stock"]) < 5 {
			mv, _ := m["movements"].([]any)
			m["movements"] = append(mv, []any{"restock", "sku1", 10 - num(m["stock"])})
			m["stock"] = 10.0 // restock to the target: a second sync does nothing
		}
	}}
	rep := runKV(t, func(m map[string]any) { m["stock"] = 10.0 }, func(w *kvWorld) []step {
		return []step{sellStep("o1"), syncStep, sellStep("o2"), syncStep}
	})
	if !rep.Safe {
		t.Fatalf("%v: the agent's own two syncs each restocked after a sale, and every repeat changes nothing", findings(rep, ""))
	}
}

// TestAddedAgainMessageIsTheSameEveryRun: a flush logs m1 and m2 as sent;
// the agent queues both and flushes twice. The finding's message must not
// depend on map order.
func TestAddedAgainMessageIsTheSameEveryRun(t *testing.T) {
	queue := &Op{Name: "queue_email", Kind: KindWrite, Params: []string{"msg_id"}, Idempotent: true}
	flush := &Op{Name: "flush_outbox", Kind: KindWrite, Params: []string{"box"}, Idempotent: true}
	q := func(id string) step {
		return step{queue, []any{id}, []any{id}, func(m map[string]any) {
			ob, _ := m["outbox"].(map[string]any)
			if ob == nil {
				ob = map[string]any{}
			}
			ob[id] = "bob"
			m["outbox"] = ob
		}}
	}
	f := step{flush, []any{"out"}, []any{"out"}, func(m map[string]any) {
		ob, _ := m["outbox"].(map[string]any)
		sent, _ := m["sent"].([]any)
		ids := slices.Sorted(maps.Keys(ob))
		for _, id := range ids {
			sent = append(sent, id)
		}
		m["sent"] = sent
		m["outbox"] = map[string]any{}
	}}
	msgs := map[string]bool{}
	for range 20 {
		rep := runKV(t, nil, func(w *kvWorld) []step { return []step{q("m1"), q("m2"), f, q("m1"), q("m2"), f} }, OnlyScenario(ScenarioBaseline))
		for _, f := range rep.Findings {
			if f.Scenario == ScenarioBaseline && f.Ops[0] == "flush_outbox" {
				msgs[f.Message] = true
			}
		}
	}
	if len(msgs) != 1 {
		for m := range msgs {
			t.Log(m)
		}
		t.Fatalf("%d different messages for one run", len(msgs))
	}
}
