package runtime

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// barrier lets its calls through in pairs: each waits until another has
// arrived. While off, it lets every call through at once. Once on, it
// also orders two calls (firstDone, afterFirst).
type barrier struct {
	mu    sync.Mutex
	on    bool
	wait  chan struct{}
	first chan struct{} // closed when the first call has returned
}

// firstDone says the first call has returned.
func (b *barrier) firstDone() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.on {
		close(b.first)
	}
}

// afterFirst waits, when on, until the first call has returned.
func (b *barrier) afterFirst() {
	b.mu.Lock()
	ch := b.first
	b.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

func (b *barrier) arrive() {
	b.mu.Lock()
	if !b.on {
		b.mu.Unlock()
		return
	}
	if b.wait == nil {
		ch := make(chan struct{})
		b.wait = ch
		b.mu.Unlock()
		<-ch
		return
	}
	close(b.wait)
	b.wait = nil
	b.mu.Unlock()
}

// callCounts counts the calls of each op in a scenario.
type callCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *callCounts) next(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[op]++
	return c.n[op]
}

// runConcurrentForced runs the baseline of agent on world w (seeded) with
// w as its State, then duplicate_delivery/concurrent with meet on: the
// calls the agent sends to the barrier there meet in pairs, so that they
// overlap on every run. It returns that scenario's result.
func runConcurrentForced(t *testing.T, w *kvWorld, seed func(m map[string]any), agent func(context.Context) error, meet *barrier, counts *callCounts) *Result {
	t.Helper()
	s := NewSuite(t.Name(), agent,
		Setup(func(context.Context) error {
			w.mu.Lock()
			w.m = map[string]any{}
			seed(w.m)
			w.mu.Unlock()
			counts.mu.Lock()
			counts.n = nil
			counts.mu.Unlock()
			return nil
		}),
		State(func() any { return w.snapshot() }))
	endSuite(t, s)
	ctx := context.Background()
	if _, err := s.Baseline(ctx); err != nil {
		t.Fatal(err)
	}
	if len(s.baseline.Findings) > 0 {
		t.Fatalf("baseline: %v", s.baseline.Findings)
	}
	for _, sc := range s.Plan() {
		if sc.Kind != ScenarioDuplicateConcurrent {
			continue
		}
		meet.mu.Lock()
		meet.on, meet.first = true, make(chan struct{})
		meet.mu.Unlock()
		res, err := s.RunScenario(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	t.Fatal("no duplicate_delivery/concurrent scenario planned")
	return nil
}

// The shop's whole state sits under one key, as a document store or a
// State that reads a database into one value returns it: {"db": {"orders":
// ..., "mail": [...]}}. The agent marks order o1 paid (set_status, a set)
// and mails its receipt. Delivered twice at once, the first receipt and
// the second set_status meet (they overlap on every run), and the second
// receipt runs alone. The buggy mailer appends the receipt again: a real
// duplicate, and the only one: the run ends with o1 paid, as one delivery
// leaves it, so set_status's overlapped repeat is absorbed by the end
// state, although its change and the mail's are under the same top-level
// key. The fixed mailer sends a receipt once: no finding.
func TestNestedStateListsOnlyTheWritesWhosePlacesDiffer(t *testing.T) {
	for _, buggy := range []bool{true, false} {
		setStatus := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"order", "status"}}
		receipt := &Op{Name: "send_receipt", Kind: KindWrite, Params: []string{"order"}}
		w := &kvWorld{}
		meet := &barrier{}
		var counts callCounts
		db := func(m map[string]any) map[string]any { return m["db"].(map[string]any) }
		agent := func(ctx context.Context) error {
			if err := traced(ctx, setStatus, []any{"o1", "paid"}, []any{"o1"}, func(context.Context) error {
				if counts.next("set_status") == 2 {
					meet.arrive()
				}
				return w.do(func(m map[string]any) {
					db(m)["orders"].(map[string]any)["o1"].(map[string]any)["status"] = "paid"
				})
			}); err != nil {
				return err
			}
			return traced(ctx, receipt, []any{"o1"}, []any{"o1"}, func(context.Context) error {
				if counts.next("send_receipt") == 1 {
					meet.arrive()
				}
				return w.do(func(m map[string]any) {
					mail, _ := db(m)["mail"].([]any)
					if !buggy && slices.Contains(mail, any("bob: receipt for o1")) {
						return
					}
					db(m)["mail"] = append(mail, "bob: receipt for o1")
				})
			})
		}
		seed := func(m map[string]any) {
			m["db"] = map[string]any{
				"orders": map[string]any{"o1": map[string]any{"status": "new", "total": 30}, "o2": map[string]any{"status": "paid", "total": 12}},
				"mail":   []any{},
			}
		}
		res := runConcurrentForced(t, w, seed, agent, meet, &counts)
		var got, dups []string
		for _, f := range res.Findings {
			got = append(got, f.Code+" "+f.Ops[0])
		}
		for _, d := range res.Duplicates {
			dups = append(dups, d.Op)
		}
		var set *Operation
		for i, o := range res.Trace.Ops {
			if o.Name == "set_status" && o.Repeat != "" {
				set = &res.Trace.Ops[i]
			}
		}
		if set == nil || !set.Overlapped {
			t.Fatalf("buggy=%v: no overlapped repeat of set_status: %+v", buggy, res.Trace.Ops)
		}
		if set.Repeat != RepeatAbsorbed || set.JudgedBy != JudgedByEndState {
			t.Errorf("buggy=%v: set_status's overlapped repeat: repeat=%q judged_by=%q, want absorbed by the end state (o1 ends paid, as one delivery leaves it)", buggy, set.Repeat, set.JudgedBy)
		}
		want, wantDups := []string(nil), []string(nil)
		if buggy {
			want, wantDups = []string{"duplicate_write send_receipt"}, []string{"send_receipt"}
		}
		if !slices.Equal(got, want) || !slices.Equal(dups, wantDups) {
			t.Errorf("buggy=%v: findings %v, duplicates %v; want %v, %v", buggy, got, dups, want, wantDups)
		}
	}
}
