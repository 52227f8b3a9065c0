package runtime

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// leftNested calls outer, whose tool makes a call of inner with its own
// context in a goroutine it leaves running (indexing in the background),
// and returns once that call began: the nested call is in flight after its
// outer call returned. Then, if next has an op, the agent calls it while
// the nested call is still in flight. The nested call writes once the
// agent's last call returned; the agent waits for it before it returns.
func leftNested(w *kvWorld, outer, inner, next step) func(context.Context) error {
	return func(ctx context.Context) error {
		var bg sync.WaitGroup
		defer bg.Wait()
		release := make(chan struct{})
		defer close(release) // before bg.Wait
		began := make(chan struct{})
		begin := sync.OnceFunc(func() { close(began) })
		if err := traced(ctx, outer.op, outer.args, outer.id, func(ctx context.Context) error {
			w.do(outer.fn)
			bg.Go(func() {
				defer begin() // a call that did not run (an injected failure)
				_ = traced(ctx, inner.op, inner.args, inner.id, func(context.Context) error {
					begin()
					<-release
					return w.do(inner.fn)
				})
			})
			<-began
			return nil
		}); err != nil {
			return err
		}
		if next.op == nil {
			return nil
		}
		return traced(ctx, next.op, next.args, next.id, func(context.Context) error { return w.do(next.fn) })
	}
}

// save_profile (an upsert) indexes the profile through index_profile (an
// upsert too), made with its context in a goroutine it leaves running:
// save_profile returns while index_profile is in flight. The window of
// save_profile ends once the call made inside it returned, and holds both
// effects: a redelivery sets both again, which changes nothing. Before,
// the window of save_profile never closed (the nested call, the last to
// return, closed only its own), so its repeat was never seen and counted
// (a false duplicate_write).
func TestOuterCallReturnedBeforeItsNestedCallIsSeen(t *testing.T) {
	save := &Op{Name: "save_profile", Kind: KindWrite, Params: []string{"user", "name"}}
	index := &Op{Name: "index_profile", Kind: KindWrite, Params: []string{"user", "name"}}
	w := &kvWorld{}
	agent := leftNested(w,
		step{save, []any{"u1", "Ann"}, []any{"u1"}, func(m map[string]any) { m["profile"] = map[string]any{"u1": "Ann"} }},
		step{index, []any{"u1", "Ann"}, []any{"u1"}, func(m map[string]any) { m["index"] = map[string]any{"Ann": "u1"} }},
		step{})
	rep := runOn(t, w, nil, agent)
	if !rep.Safe {
		t.Fatalf("findings: %v", findings(rep, ""))
	}
	for _, sc := range []string{ScenarioDuplicateSeq, "crash_restart/save_profile#1", "crash_restart/index_profile#1"} {
		o := opByID(t, rep, sc, "2:save_profile#2")
		if o.Repeat != RepeatAbsorbed || o.JudgedBy != JudgedByState {
			t.Errorf("%s: save_profile's repeat set what was set: repeat=%q judged_by=%q", sc, o.Repeat, o.JudgedBy)
		}
	}
}

// queue_mail puts a receipt in the outbox and indexes it through
// index_mail (a set), made with its context in a goroutine it leaves
// running; the agent then flushes the outbox (sent over SMTP, outside the
// snapshot) while index_mail is still in flight. The flush overlaps the
// nested call, and so the window of queue_mail, which holds the flush's
// effect: queue_mail is overlapped too, and a redelivery, which mails the
// receipt again, is a duplicate of it. Before, queue_mail, returned when
// the flush began, was not marked overlapped: its window (outbox added,
// then sent) showed only the index, and its repeat, which changed
// nothing there, was absorbed by State: the second mail was hidden, and
// with index_mail and the flush declared idempotent the suite was safe.
func TestWriteNextToALeftNestedCallOverlapsItsOuterCall(t *testing.T) {
	queue := &Op{Name: "queue_mail", Kind: KindWrite, Params: []string{"msg", "to", "body"}}
	index := &Op{Name: "index_mail", Kind: KindWrite, Params: []string{"msg"}, Idempotent: true}
	flush := &Op{Name: "flush_outbox", Kind: KindWrite, Params: []string{"box"}, Idempotent: true}
	w := &kvWorld{}
	agent := leftNested(w,
		step{queue, []any{"m1", "bob", "your receipt"}, []any{"m1"}, func(m map[string]any) {
			ob, _ := m["outbox"].([]any)
			m["outbox"] = append(ob, "bob:your receipt")
		}},
		step{index, []any{"m1"}, []any{"m1"}, func(m map[string]any) { m["index"] = map[string]any{"m1": "bob"} }},
		step{flush, []any{"out"}, []any{"out"}, func(m map[string]any) { m["outbox"] = nil }})
	rep := runOn(t, w, nil, agent)
	// (Not crash_restart/queue_mail#1: the crashed delivery flushed
	// nothing, and the restart's one flush sent both receipts, outside
	// the snapshot: an overlapped repeat is judged by the end state.)
	for _, sc := range []string{ScenarioDuplicateSeq, "crash_restart/flush_outbox#1"} {
		if got := findings(rep, sc); !slices.Contains(got, "duplicate_write queue_mail") {
			t.Errorf("%s: the redelivery mailed the receipt again: findings %v", sc, got)
		}
		if o := opByID(t, rep, sc, "1:queue_mail#1"); !o.Overlapped {
			t.Errorf("%s: the flush ran inside queue_mail's window, yet %s is not overlapped", sc, o.ID)
		}
		if o := opByID(t, rep, sc, "2:queue_mail#2"); o.Repeat != RepeatDuplicate {
			t.Errorf("%s: queue_mail's repeat: repeat=%q judged_by=%q", sc, o.Repeat, o.JudgedBy)
		}
	}
}
