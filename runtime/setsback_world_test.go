package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// kvWorld is a key/value world; its snapshot is a deep copy through JSON.
type kvWorld struct {
	mu sync.Mutex
	m  map[string]any
}

func (w *kvWorld) do(f func(m map[string]any)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(w.m)
	return nil
}

func (w *kvWorld) snapshot() any {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, _ := json.Marshal(w.m)
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

// step is one traced call of an agent that calls its steps in turn.
type step struct {
	op   *Op
	args []any
	id   []any
	fn   func(m map[string]any)
}

// runKV runs an agent that calls steps in turn, each retried once on an
// error, with the world (seeded) as its State.
func runKV(t *testing.T, seed func(m map[string]any), steps func(w *kvWorld) []step, opts ...Option) *Report {
	t.Helper()
	return runSteps(t, true, seed, steps, opts...)
}

// runKVNoRetry runs an agent that calls steps in turn and never retries:
// a failed call ends the run.
func runKVNoRetry(t *testing.T, seed func(m map[string]any), steps func(w *kvWorld) []step, opts ...Option) *Report {
	t.Helper()
	return runSteps(t, false, seed, steps, opts...)
}

func runSteps(t *testing.T, retry bool, seed func(m map[string]any), steps func(w *kvWorld) []step, opts ...Option) *Report {
	t.Helper()
	w := &kvWorld{}
	agent := func(ctx context.Context) error {
		for _, s := range steps(w) {
			call := func() error {
				return traced(ctx, s.op, s.args, s.id, func(context.Context) error { return w.do(s.fn) })
			}
			if err := call(); err != nil {
				if !retry || ctx.Err() != nil {
					return err
				}
				if err := call(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return runOn(t, w, seed, agent, opts...)
}

// runOn runs agent on world w, made afresh (and seeded) by Setup, with w as
// its State.
func runOn(t *testing.T, w *kvWorld, seed func(m map[string]any), agent func(context.Context) error, opts ...Option) *Report {
	t.Helper()
	opts = append([]Option{
		Setup(func(context.Context) error {
			w.mu.Lock()
			w.m = map[string]any{}
			if seed != nil {
				seed(w.m)
			}
			w.mu.Unlock()
			return nil
		}),
		State(func() any { return w.snapshot() }),
	}, opts...)
	rep, err := Run(context.Background(), t.Name(), agent, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	return 0
}

// A mail is put in the outbox; resolving the ticket sends what is pending
// (over SMTP, outside the snapshot) and clears the outbox. A redelivery
// queues the mail again and sends it a second time: queue_email's repeat
// starts where its first execution started, and is a duplicate, not a
// set back.
func TestMailQueuedAgainAfterTheOutboxWasSentIsADuplicate(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		queue := &Op{Name: "queue_email", Kind: KindWrite, Params: []string{"msg_id", "to", "body"}}
		resolve := &Op{Name: "resolve_ticket", Kind: KindWrite, Params: []string{"id"}}
		rep := runKV(t, nil, func(w *kvWorld) []step {
			return []step{
				{queue, []any{"m1", "bob", "your refund"}, []any{"m1"}, func(m map[string]any) {
					if keyed { // a pending mail queued twice is one mail
						ob, _ := m["outbox"].(map[string]any)
						if ob == nil {
							ob = map[string]any{}
						}
						ob["m1"] = "bob:your refund"
						m["outbox"] = ob
						return
					}
					ob, _ := m["outbox"].([]any)
					m["outbox"] = append(ob, "bob:your refund")
				}},
				{resolve, []any{"t1"}, []any{"t1"}, func(m map[string]any) {
					m["outbox"] = nil // sent
					m["t1"] = "resolved"
				}},
			}
		})
		got := findings(rep, ScenarioDuplicateSeq)
		if len(got) == 0 || got[0] != "duplicate_write queue_email" {
			t.Fatalf("keyed=%v: the redelivery mailed m1 again: %v", keyed, got)
		}
	}
}

// A deposit then a payout: a redelivery deposits and pays out again, and
// the balance ends as one delivery leaves it. The payout went out twice.
func TestDepositAndPayoutRedeliveredAreDuplicates(t *testing.T) {
	dep := &Op{Name: "deposit", Kind: KindWrite, Params: []string{"acct", "amount"}}
	pay := &Op{Name: "payout", Kind: KindWrite, Params: []string{"acct", "amount"}}
	rep := runKV(t, nil, func(w *kvWorld) []step {
		return []step{
			{dep, []any{"a1", 100}, []any{"a1"}, func(m map[string]any) { m["a1"] = num(m["a1"]) + 100 }},
			{pay, []any{"a1", 100}, []any{"a1"}, func(m map[string]any) { m["a1"] = num(m["a1"]) - 100 }},
		}
	})
	var ops []string
	for _, r := range rep.Results {
		if r.Scenario == ScenarioDuplicateSeq {
			for _, d := range r.Duplicates {
				ops = append(ops, d.Op)
			}
		}
	}
	if !slices.Equal(ops, []string{"deposit", "payout"}) {
		t.Fatalf("the redelivery deposited and paid out again: duplicates %v", ops)
	}
}

// A job is queued, then a drain (declared idempotent) runs the queue. A
// redelivery queues the job again and the drain runs it again: both
// repeats are duplicates (the job is done twice), and neither says the
// drain's declaration is wrong: its repeat did not start from what its
// first execution left (the job was queued again in between).
func TestQueueAgainBeforeADrainBlamesTheQueue(t *testing.T) {
	q := &Op{Name: "queue_job", Kind: KindWrite, Params: []string{"job"}}
	drain := &Op{Name: "drain_queue", Kind: KindWrite, Params: []string{"queue"}, Idempotent: true}
	rep := runKV(t, nil, func(w *kvWorld) []step {
		return []step{
			{q, []any{"reindex"}, []any{"reindex"}, func(m map[string]any) {
				l, _ := m["queue"].([]any)
				m["queue"] = append(l, "reindex")
			}},
			{drain, []any{"q"}, []any{"q"}, func(m map[string]any) {
				l, _ := m["queue"].([]any)
				d, _ := m["done"].([]any)
				m["done"] = append(d, l...)
				m["queue"] = []any{}
			}},
		}
	})
	got := findings(rep, ScenarioDuplicateSeq)
	if len(got) != 1 || got[0] != "duplicate_write queue_job" {
		t.Fatalf("duplicate_delivery/sequential: %v, want queue_job's duplicate, the drain's folded into it", got)
	}
	o := opByID(t, rep, ScenarioDuplicateSeq, "2:drain_queue#2")
	if o.Repeat != RepeatDuplicate || o.JudgedBy != JudgedByState {
		t.Fatalf("the drain's repeat ran the job again: repeat=%q judged_by=%q", o.Repeat, o.JudgedBy)
	}
	for _, f := range rep.Findings {
		if f.Code == CodeNotIdempotent {
			t.Fatalf("the drain is idempotent: %s", f.Message)
		}
	}
}

// The ticket is open already; the agent sets it open (no change) and
// closes it. A redelivery opens it again (set back, from what the first
// call left) and closes it: the world ends as one delivery leaves it.
// (Undeclared, set_status's lost acknowledgement still counts: State saw
// no execution of it change anything, see unseenNote.)
func TestSetBackToWhatANoOpFirstCallLeft(t *testing.T) {
	for _, idempotent := range []bool{true} {
		set := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"id", "status"}, Idempotent: idempotent}
		cl := &Op{Name: "close_ticket", Kind: KindWrite, Params: []string{"id"}, Idempotent: true}
		rep := runKV(t, func(m map[string]any) { m["t1"] = "open" }, func(w *kvWorld) []step {
			return []step{
				{set, []any{"t1", "open"}, []any{"t1"}, func(m map[string]any) { m["t1"] = "open" }},
				{cl, []any{"t1"}, []any{"t1"}, func(m map[string]any) { m["t1"] = "closed" }},
			}
		})
		if !rep.Safe {
			t.Errorf("idempotent=%v: %v", idempotent, findings(rep, ""))
		}
	}
}

// A whole inbox of 1,500 messages marked read, then unread; a redelivery
// does both again. Both ops are sets (declared idempotent) whose repeats
// start from what the other left: absorbed, with thousands of places compared.
func TestLargeInboxMarkedAgainIsAbsorbed(t *testing.T) {
	const n = 1500
	mark := func(read bool) func(m map[string]any) {
		return func(m map[string]any) {
			l, _ := m["inbox"].([]any)
			for _, e := range l {
				e.(map[string]any)["read"] = read
			}
		}
	}
	read := &Op{Name: "mark_all_read", Kind: KindWrite, Params: []string{"box"}, Idempotent: true}
	unread := &Op{Name: "mark_all_unread", Kind: KindWrite, Params: []string{"box"}, Idempotent: true}
	rep := runKV(t, func(m map[string]any) {
		l := make([]any, n)
		for i := range l {
			l[i] = map[string]any{"id": i, "subject": "message " + strconv.Itoa(i), "read": false}
		}
		m["inbox"] = l
	}, func(w *kvWorld) []step {
		return []step{
			{read, []any{"in"}, []any{"in"}, mark(true)},
			{unread, []any{"in"}, []any{"in"}, mark(false)},
		}
	})
	if !rep.Safe {
		t.Fatalf("findings: %v", findings(rep, ""))
	}
}

// Adding to a cart inserts a row with a new id (from a sequence outside
// the snapshot, as SQLite's AUTOINCREMENT keeps it) unless the item is in
// the cart (declared idempotent, as it is); checkout records the purchase
// once per cart and empties the cart. A redelivery adds the item again,
// under another id, after checkout emptied the cart, and checks out
// again: no second purchase. The repeat did not start from what the first
// add left (its row, id 1, was gone): no sign against the declaration,
// and the run ends as one delivery leaves it.
func TestCartRowAddedAgainUnderANewIDIsNoSignAgainstIdempotent(t *testing.T) {
	add := &Op{Name: "add_to_cart", Kind: KindWrite, Params: []string{"cart", "sku"}, Idempotent: true}
	checkout := &Op{Name: "checkout", Kind: KindWrite, Params: []string{"cart"}, Idempotent: true}
	var seq atomic.Int64
	// The sequence starts over with the world (as a fresh database's
	// does): a snapshot must be the same for the same history.
	rep := runKV(t, func(map[string]any) { seq.Store(0) }, func(w *kvWorld) []step {
		return []step{
			{add, []any{"c1", "sku-1"}, []any{"c1", "sku-1"}, func(m map[string]any) {
				rows, _ := m["cart"].([]any)
				for _, r := range rows {
					if r.([]any)[2] == "sku-1" {
						return
					}
				}
				m["cart"] = append(rows, []any{seq.Add(1), "c1", "sku-1"})
			}},
			{checkout, []any{"c1"}, []any{"c1"}, func(m map[string]any) {
				if m["purchase"] == nil {
					m["purchase"] = "c1: sku-1"
				}
				m["cart"] = []any{}
			}},
		}
	})
	if !rep.Safe {
		t.Fatalf("findings: %v", findings(rep, ""))
	}
}

// An order's status set open, on hold, then open again through an upsert
// declared idempotent, delivered twice, at once too (the calls of the two
// deliveries meet in the tool, so that they overlap): what each repeat
// did is what one execution of it does somewhere in the baseline (open
// after hold, as the agent's own third call), and the end is as one
// delivery leaves it.
func TestStatusRoundTripDeliveredTwice(t *testing.T) {
	set := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"order", "status"}, Idempotent: true}
	w := &kvWorld{}
	meet := &rendezvous{timeout: 10 * time.Millisecond}
	agent := func(ctx context.Context) error {
		for _, st := range []string{"open", "hold", "open"} {
			if err := traced(ctx, set, []any{"o1", st}, []any{"o1"}, func(context.Context) error {
				meet.wait()
				return w.do(func(m map[string]any) { m["o1"] = st })
			}); err != nil {
				return err
			}
		}
		return nil
	}
	for range 2 { // the concurrent delivery's interleaving varies
		rep := runOn(t, w, nil, agent)
		if !rep.Safe {
			t.Fatalf("findings: %v", findings(rep, ""))
		}
	}
}

// export queues a job that a worker started once for the test takes up a
// while later, appending the file without looking for it: each execution
// exports once more. State shows a change only once the worker got to it,
// and no Settle waits for it. Delivered twice at once (the calls meet in
// the tool, so that they overlap), the two calls changed nothing visible
// together, as one execution did in the baseline: that says nothing, and
// both count.
func TestOverlappedWritesWhoseEffectLandsLaterCount(t *testing.T) {
	export := &Op{Name: "export", Kind: KindWrite, Params: []string{"report"}}
	w := &kvWorld{m: map[string]any{}}
	jobs := make(chan string, 16)
	done := make(chan struct{})
	var worker sync.WaitGroup
	worker.Go(func() {
		for {
			select {
			case j := <-jobs:
				time.Sleep(20 * time.Millisecond)
				w.do(func(m map[string]any) {
					files, _ := m["files"].([]any)
					m["files"] = append(files, j)
				})
			case <-done:
				return
			}
		}
	})
	defer worker.Wait()
	defer close(done)
	meet := &rendezvous{timeout: 10 * time.Millisecond}
	agent := func(ctx context.Context) error {
		return traced(ctx, export, []any{"revenue"}, []any{"revenue"}, func(context.Context) error {
			meet.wait()
			jobs <- "revenue.csv"
			return nil
		})
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error {
			time.Sleep(30 * time.Millisecond) // the jobs of the scenario before are done
			w.mu.Lock()
			w.m = map[string]any{}
			w.mu.Unlock()
			return nil
		}),
		State(func() any { return w.snapshot() }))
	if err != nil {
		t.Fatal(err)
	}
	got := findings(rep, ScenarioDuplicateConcurrent)
	if len(got) != 1 || got[0] != "duplicate_write export" {
		for _, r := range rep.Results {
			if r.Scenario == ScenarioDuplicateConcurrent {
				for _, o := range r.Trace.Ops {
					t.Logf("%s repeat=%q judged_by=%q overlapped=%v", o.ID, o.Repeat, o.JudgedBy, o.Overlapped)
				}
			}
		}
		t.Fatalf("duplicate_delivery/concurrent exported twice: %v", got)
	}
}

// Orders read as rows (SELECT id, status FROM orders): set_status (an
// upsert declared idempotent) sets paid, ship (undeclared) sets shipped
// and inserts a shipment only if there is none. A redelivery sets paid
// again (a set back of the row) and ships again: ship's repeat flips the
// status back to shipped, as its first execution did, because the
// set-back flipped it to paid, and adds no shipment. The run ends as one
// delivery leaves it. A row is one place, keyed by its first column.
func TestShipAgainAfterASetBackOfTheRowIsAbsorbed(t *testing.T) {
	set := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"order", "status"}, Idempotent: true}
	ship := &Op{Name: "ship", Kind: KindWrite, Params: []string{"order"}}
	row := func(m map[string]any, status string) {
		m["orders"] = []any{[]any{"o1", status}}
	}
	rep := runKV(t, nil, func(w *kvWorld) []step {
		return []step{
			{set, []any{"o1", "paid"}, []any{"o1"}, func(m map[string]any) { row(m, "paid") }},
			{ship, []any{"o1"}, []any{"o1"}, func(m map[string]any) {
				row(m, "shipped")
				if m["shipments"] == nil {
					m["shipments"] = []any{"o1"}
				}
			}},
		}
	})
	if !rep.Safe {
		t.Fatalf("findings: %v", findings(rep, ""))
	}
	o := opByID(t, rep, ScenarioDuplicateSeq, "2:ship#2")
	if o.Repeat != RepeatAbsorbed || o.JudgedBy != JudgedByEndState {
		t.Fatalf("ship's repeat: repeat=%q judged_by=%q", o.Repeat, o.JudgedBy)
	}
}

// charge books a charge, and then its client gives up waiting (a timeout
// shorter than the service's latency): the call fails, yet the charge
// landed. The agent retries, and books a second one. With State the
// failed call is seen to have changed the world: it executed, and the
// retry is its repeat, a duplicate already in the baseline.
func TestWriteThatFailedAfterLandingIsAnExecution(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order", "amount"}}
	w := &kvWorld{}
	var timeouts atomic.Int32 // the deliveries of duplicate_delivery/concurrent share it
	agent := func(ctx context.Context) error {
		call := func() error {
			return traced(ctx, charge, []any{"o1", 30}, []any{"o1"}, func(context.Context) error {
				w.do(func(m map[string]any) {
					l, _ := m["charges"].([]any)
					m["charges"] = append(l, "o1:30")
				})
				if timeouts.Add(1) == 1 {
					return errors.New("charge: context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
				}
				return nil
			})
		}
		if err := call(); err != nil {
			return call()
		}
		return nil
	}
	rep := runOn(t, w, func(map[string]any) { timeouts.Store(0) }, agent)
	got := findings(rep, ScenarioBaseline)
	if len(got) != 1 || got[0] != "duplicate_write charge" {
		t.Fatalf("baseline: %v", got)
	}
	if msg := rep.Baseline.Findings[0].Message; !strings.Contains(msg, "1:charge#1 failed with") || !strings.Contains(msg, "it landed") {
		t.Fatalf("message %q does not say the first call landed", msg)
	}
}

// The same job queue and drain, the two deliveries at once with their calls
// meeting in the tools (so that they overlap): both queue the job, and the
// drains, together, run it twice where one delivery runs it once. The
// cluster of drains began from a queue of two, not one: that says nothing
// against the drain's declaration (no not_idempotent), but the run ended
// with the job done twice: a duplicate.
func TestOverlappedDrainsAfterTwoQueuesAreNoSignAgainstTheDeclaration(t *testing.T) {
	q := &Op{Name: "queue_job", Kind: KindWrite, Params: []string{"job"}}
	drain := &Op{Name: "drain_queue", Kind: KindWrite, Params: []string{"queue"}, Idempotent: true}
	w := &kvWorld{}
	meet := &rendezvous{timeout: 10 * time.Millisecond}
	agent := func(ctx context.Context) error {
		if err := traced(ctx, q, []any{"reindex"}, []any{"reindex"}, func(context.Context) error {
			meet.wait()
			return w.do(func(m map[string]any) {
				l, _ := m["queue"].([]any)
				m["queue"] = append(l, "reindex")
			})
		}); err != nil {
			return err
		}
		return traced(ctx, drain, []any{"q"}, []any{"q"}, func(context.Context) error {
			meet.wait()
			return w.do(func(m map[string]any) {
				l, _ := m["queue"].([]any)
				d, _ := m["done"].([]any)
				m["done"] = append(d, l...)
				m["queue"] = []any{}
			})
		})
	}
	for range 3 {
		rep := runOn(t, w, nil, agent)
		for _, f := range rep.Findings {
			if f.Code == CodeNotIdempotent {
				t.Fatalf("%s: the drain is idempotent: %s", f.Scenario, f.Message)
			}
		}
		if got := findings(rep, ScenarioDuplicateConcurrent); len(got) == 0 {
			t.Fatalf("duplicate_delivery/concurrent ran the job twice: no finding")
		}
	}
}
