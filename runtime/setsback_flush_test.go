package runtime

import "testing"

// queue_email upserts a mail by its id (a retry changes nothing: correctly
// declared idempotent); flush_outbox sends what is pending and logs it in
// "sent" (a second flush sends nothing: correctly declared idempotent). A
// redelivery queues m1 again after it was sent and flushes it again: the
// customer gets two mails, and "sent" shows m1 twice.
func TestMailRequeuedAndFlushedAgainWithBothOpsIdempotentIsADuplicate(t *testing.T) {
	queue := &Op{Name: "queue_email", Kind: KindWrite, Params: []string{"msg_id", "to", "body"}, Idempotent: true}
	flush := &Op{Name: "flush_outbox", Kind: KindWrite, Params: []string{"box"}, Idempotent: true}
	rep := runKV(t, nil, func(w *kvWorld) []step {
		return []step{
			{queue, []any{"m1", "bob", "refund"}, []any{"m1"}, func(m map[string]any) {
				ob, _ := m["outbox"].(map[string]any)
				if ob == nil {
					ob = map[string]any{}
				}
				ob["m1"] = "bob:refund"
				m["outbox"] = ob
			}},
			{flush, []any{"out"}, []any{"out"}, func(m map[string]any) {
				ob, _ := m["outbox"].(map[string]any)
				sent, _ := m["sent"].([]any)
				for id := range ob {
					sent = append(sent, id)
				}
				m["sent"] = sent
				m["outbox"] = map[string]any{}
			}},
		}
	})
	if rep.Safe {
		t.Fatalf("report safe, but the redelivery sent m1 twice (sent: [m1 m1] where one delivery leaves [m1])")
	}
}

// deposit is declared idempotent (wrongly: an MCP idempotentHint); sweep
// moves the checking balance into savings (correctly idempotent: a second
// sweep moves 0). The agent never retries. A redelivery deposits again and
// sweeps again: savings ends 200 where one delivery leaves 100.
func TestWronglyIdempotentDepositThenSweepRedeliveredIsFound(t *testing.T) {
	for _, retry := range []bool{false, true} {
		dep := &Op{Name: "deposit", Kind: KindWrite, Params: []string{"acct", "amount"}, Idempotent: true}
		sweep := &Op{Name: "sweep", Kind: KindWrite, Params: []string{"acct"}, Idempotent: true}
		steps := func(w *kvWorld) []step {
			return []step{
				{sweep, []any{"a1"}, []any{"a1"}, func(m map[string]any) {
					m["savings"] = num(m["savings"]) + num(m["checking"])
					m["checking"] = 0.0
				}},
				{dep, []any{"a1", 100}, []any{"a1"}, func(m map[string]any) { m["checking"] = num(m["checking"]) + 100 }},
				{sweep, []any{"a1"}, []any{"a1"}, func(m map[string]any) {
					m["savings"] = num(m["savings"]) + num(m["checking"])
					m["checking"] = 0.0
				}},
			}
		}
		var rep *Report
		if retry {
			rep = runKV(t, nil, steps)
		} else {
			rep = runKVNoRetry(t, nil, steps)
		}
		if rep.Safe {
			t.Errorf("retry=%v: report safe, but a redelivery leaves savings 200 where one delivery leaves 100", retry)
		}
	}
}

// A ticket that was never assigned: unassign sets assignee to "" (truly
// idempotent), close_ticket closes it and drops the assignee field (truly
// idempotent). A redelivery ends exactly as one delivery does; the
// repeat of unassign went from no field to "" as its first call did.
func TestUnassignThenCloseRedeliveredIsNotAFinding(t *testing.T) {
	un := &Op{Name: "unassign", Kind: KindWrite, Params: []string{"id"}, Idempotent: true}
	cl := &Op{Name: "close_ticket", Kind: KindWrite, Params: []string{"id"}, Idempotent: true}
	rep := runKV(t, func(m map[string]any) { m["t1"] = map[string]any{"status": "open"} }, func(w *kvWorld) []step {
		return []step{
			{un, []any{"t1"}, []any{"t1"}, func(m map[string]any) { m["t1"].(map[string]any)["assignee"] = "" }},
			{cl, []any{"t1"}, []any{"t1"}, func(m map[string]any) {
				t1 := m["t1"].(map[string]any)
				t1["status"] = "closed"
				delete(t1, "assignee")
			}},
		}
	})
	if !rep.Safe {
		t.Fatalf("findings: %v", findings(rep, ""))
	}
}

// The agent sets two cart lines and recomputes the total after each
// (recompute_total is a pure function of the lines: truly idempotent).
// The second recompute changes the total because a line was added in
// between, not because recompute is not idempotent.
func TestRecomputeTotalAfterTheCartChangedIsNotAFinding(t *testing.T) {
	line := &Op{Name: "set_line", Kind: KindWrite, Params: []string{"sku", "qty"}, Idempotent: true}
	rec := &Op{Name: "recompute_total", Kind: KindWrite, Params: []string{"cart"}, Idempotent: true}
	price := map[string]float64{"a": 5, "b": 7}
	recompute := func(m map[string]any) {
		lines, _ := m["lines"].(map[string]any)
		total := 0.0
		for sku, q := range lines {
			total += price[sku] * num(q)
		}
		m["total"] = total
	}
	setLine := func(sku string, q float64) func(m map[string]any) {
		return func(m map[string]any) {
			lines, _ := m["lines"].(map[string]any)
			if lines == nil {
				lines = map[string]any{}
			}
			lines[sku] = q
			m["lines"] = lines
		}
	}
	rep := runKV(t, nil, func(w *kvWorld) []step {
		return []step{
			{line, []any{"a", 1}, []any{"a"}, setLine("a", 1)},
			{rec, []any{"c1"}, []any{"c1"}, recompute},
			{line, []any{"b", 1}, []any{"b"}, setLine("b", 1)},
			{rec, []any{"c1"}, []any{"c1"}, recompute},
		}
	})
	if !rep.Safe {
		t.Fatalf("findings: %v", findings(rep, ""))
	}
}

// The agent notifies bob for two tickets with the same message id: it
// queues m1 and flushes, twice. Bob gets two mails; "sent" shows m1 twice.
func TestMailQueuedAndFlushedTwiceByTheAgentIsFound(t *testing.T) {
	for _, draft := range []bool{false, true} {
		queue := &Op{Name: "queue_email", Kind: KindWrite, Params: []string{"msg_id", "to", "body"}, Idempotent: true}
		flush := &Op{Name: "flush_outbox", Kind: KindWrite, Params: []string{"box"}, Idempotent: true}
		q := step{queue, []any{"m1", "bob", "refund"}, []any{"m1"}, func(m map[string]any) {
			ob, _ := m["outbox"].(map[string]any)
			if ob == nil {
				ob = map[string]any{}
			}
			ob["m1"] = "bob:refund"
			m["outbox"] = ob
		}}
		f := step{flush, []any{"out"}, []any{"out"}, func(m map[string]any) {
			ob, _ := m["outbox"].(map[string]any)
			sent, _ := m["sent"].([]any)
			for id := range ob {
				sent = append(sent, id)
			}
			m["sent"] = sent
			m["outbox"] = map[string]any{}
		}}
		seed := func(m map[string]any) {
			if draft { // a draft of m1 is pending already
				m["outbox"] = map[string]any{"m1": "bob:refund"}
			}
		}
		rep := runKV(t, seed, func(w *kvWorld) []step { return []step{q, f, q, f} })
		if len(findings(rep, ScenarioBaseline)) == 0 {
			t.Errorf("draft=%v: baseline has no finding, but it mailed m1 twice", draft)
		}
	}
}
