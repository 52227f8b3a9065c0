package runtime

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notifyWorld is TestNotificationSentFromAToolsGoroutineIsTheScenarios's
// agent with the moments its race left to the scheduler fixed: in the
// baseline the notification begins once place_order returned (a window of
// its own there), and of two deliveries at once the two place_orders
// overlap, the replay returns, and the notification begins while the
// first place_order, which it was made inside of, is still in flight (in
// their window, with one of its own). Buggy, the replay places the order
// again (again) or sends the notification itself (notifies). With
// stamped, place_order marks the order sent (State's "sent"): at once in
// the baseline, and of two deliveries once the notification returned,
// inside the first place_order, which then changed the state on both sides
// of the notification's window. With late, the other way round: in the
// baseline the notification begins inside place_order, and of two
// deliveries once both place_orders returned.
type notifyWorld struct {
	again, notifies, stamped, late bool

	mu            sync.Mutex
	orders, notes []string
	sent          bool
	runs          int           // Setups: 1 the baseline, 2 the two deliveries
	entered       int           // place_order bodies begun in this run
	bothIn        chan struct{} // closed when two bodies have begun
	replayed      chan struct{} // closed when the replay's call returned
	lost          []string      // waits that timed out: the test's own failure
}

const notifyWait = 10 * time.Second // a bound for the test's waits, never reached

func (w *notifyWorld) wait(ch chan struct{}, what string) {
	select {
	case <-ch:
	case <-time.After(notifyWait):
		w.mu.Lock()
		w.lost = append(w.lost, what)
		w.mu.Unlock()
	}
}

func (w *notifyWorld) run(t *testing.T) *Report {
	place := &Op{Name: "place_order", Kind: KindWrite, Params: []string{"customer"}}
	notify := &Op{Name: "notify", Kind: KindWrite, Params: []string{"order"}}
	note := func() {
		w.mu.Lock()
		w.notes = append(w.notes, "ord-ada placed")
		w.mu.Unlock()
	}
	agent := func(ctx context.Context) error {
		var begun, placed, done chan struct{}
		replay := false
		err := traced(ctx, place, []any{"ada"}, []any{"ada"}, func(ctx context.Context) error {
			w.mu.Lock()
			two := w.runs == 2
			if w.entered++; w.entered == 2 {
				close(w.bothIn)
			}
			replay = slices.Contains(w.orders, "ada")
			if !replay || w.again {
				w.orders = append(w.orders, "ada")
			}
			w.mu.Unlock()
			if two {
				w.wait(w.bothIn, "the two place_orders to overlap")
			}
			if replay {
				if w.notifies {
					note()
				}
				return nil
			}
			// The notification, from a goroutine the tool does not
			// wait for.
			begun, placed, done = make(chan struct{}), make(chan struct{}), make(chan struct{})
			go func() {
				switch {
				case two && w.late:
					w.wait(w.replayed, "the replay to return")
					w.wait(placed, "place_order to return")
				case two:
					w.wait(w.replayed, "the replay to return")
				case !w.late:
					w.wait(placed, "place_order to return")
				}
				_ = traced(context.WithoutCancel(ctx), notify, []any{"ord-ada"}, []any{"ord-ada"}, func(context.Context) error {
					close(begun)
					note()
					return nil
				})
				close(done)
			}()
			if two != w.late {
				w.wait(begun, "the notification to begin")
			}
			if w.stamped {
				if two {
					w.wait(done, "the notification to return")
				}
				w.mu.Lock()
				w.sent = true
				w.mu.Unlock()
			}
			return nil
		})
		switch {
		case placed != nil:
			close(placed)
			// The run waits for the calls begun in it: the
			// notification's, once begun.
			w.wait(begun, "the notification to begin")
		case replay:
			close(w.replayed)
		}
		return err
	}
	rep, err := Run(context.Background(), t.Name(), agent, OnlyScenario(ScenarioDuplicateConcurrent),
		Setup(func(context.Context) error {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.runs++
			w.orders, w.notes, w.sent, w.entered = nil, nil, false, 0
			w.bothIn, w.replayed = make(chan struct{}), make(chan struct{})
			return nil
		}),
		State(func() any {
			w.mu.Lock()
			defer w.mu.Unlock()
			return map[string]any{"orders": slices.Clone(w.orders), "notes": slices.Clone(w.notes), "sent": w.sent}
		}))
	require.NoError(t, err)
	require.Equal(t, 2, w.runs, "the baseline and the two deliveries")
	require.Empty(t, w.lost, "the test's waits")
	return rep
}

// A notification a place_order sends from its goroutine, made inside the
// first of two deliveries' overlapped place_orders, in a window of its own
// inside theirs, is that call's effect, not the repeat's: where the
// baseline saw it in a window of its own, outside one execution of
// place_order, the two place_orders' window held one execution's change
// and the notification's, and the correct agent (a replay that does
// nothing) was a duplicate_write "notes: null → ["ord-ada placed"]" (7
// runs of 300 of TestNotificationSentFromAToolsGoroutineIsTheScenarios
// under -race, with the race this test fixes). The buggy twins, whose
// replay places the order again or sends the notification itself, are
// still duplicate_writes of place_order.
func TestAnotherCallsNestedWindowInARepeatsCluster(t *testing.T) {
	for range 3 {
		w := &notifyWorld{}
		rep := w.run(t)
		base := rep.Baseline.Trace
		require.Len(t, base.Ops, 2)
		require.NotContains(t, base.Ops[0].StateChange, "notes", "the baseline's place_order window without the notification")
		require.Contains(t, base.Ops[1].StateChange, "notes", "the baseline's notification in its own window")
		r := resultOf(t, rep, ScenarioDuplicateConcurrent)
		var places []*Operation
		var sent *Operation
		for i := range r.Trace.Ops {
			switch o := &r.Trace.Ops[i]; o.Name {
			case "place_order":
				places = append(places, o)
			case "notify":
				sent = o
			}
		}
		require.Len(t, places, 2)
		require.NotNil(t, sent)
		require.True(t, places[0].Overlapped && places[1].Overlapped, "the two place_orders overlapped")
		require.Contains(t, []string{places[0].ID, places[1].ID}, sent.Parent, "the notification made inside a place_order")
		require.Contains(t, sent.StateChange, "notes", "the notification in a window of its own")
		assert.Empty(t, findings(rep, ""))
		assert.True(t, rep.Safe)
		assert.False(t, r.Inconclusive, "%q", r.Trace.Notes)
		// The repeat is the call that began second, whichever of the
		// two found the order placed.
		at := slices.IndexFunc(places, func(o *Operation) bool { return o.Repeat != "" })
		require.NotEqual(t, -1, at, "a place_order judged as the repeat")
		repeat := places[at]
		assert.Equal(t, RepeatAbsorbed, repeat.Repeat)
		assert.Equal(t, JudgedByOneExecution, repeat.JudgedBy)
		assert.Len(t, notesSaying(r.Trace, "what changed there is that call's doing"), 1, "%q", r.Trace.Notes)
	}
	for _, w := range []*notifyWorld{{again: true}, {notifies: true}} {
		rep := w.run(t)
		assert.Contains(t, findings(rep, ScenarioDuplicateConcurrent), "duplicate_write place_order", "again %v, notifies %v", w.again, w.notifies)
		assert.False(t, rep.Safe)
	}
}

// As above, but the first place_order marks the order sent once the
// notification returned, inside its own call: the two place_orders
// changed the state before the notification's window and after it, and
// what they left beyond one execution (the notification) is at the place
// the notification changed. The snapshots cannot part the stretches' sum
// from the notification's change: the repeat is not judged, and the
// scenario is inconclusive, never a duplicate_write on that evidence. The
// buggy twin, whose replay sends the notification itself, ends with two:
// still a duplicate_write of place_order.
func TestAnotherCallsNestedWindowBetweenARepeatsChanges(t *testing.T) {
	for range 3 {
		rep := (&notifyWorld{stamped: true}).run(t)
		require.Contains(t, rep.Baseline.Trace.Ops[0].StateChange, "sent", "the baseline's place_order marks the order sent")
		r := resultOf(t, rep, ScenarioDuplicateConcurrent)
		assert.Empty(t, findings(rep, ""))
		assert.True(t, r.Inconclusive)
		assert.Len(t, notesSaying(r.Trace, "in a way the snapshots cannot part from the repeat's"), 1, "%q", r.Trace.Notes)
	}
	rep := (&notifyWorld{stamped: true, notifies: true}).run(t)
	assert.Contains(t, findings(rep, ScenarioDuplicateConcurrent), "duplicate_write place_order")
	assert.False(t, rep.Safe)
}

// The other way round: in the baseline the notification began inside
// place_order, whose window held it, and of two deliveries once both
// place_orders returned, in a window of its own. Their window held less
// than one execution's, and the correct agent was a duplicate_write
// "notes: ["ord-ada placed"] → null". The baseline's notification is cut
// out of one execution's window as the scenario's is out of the calls':
// the repeat is absorbed. The buggy twin whose replay places the order
// again is still a duplicate_write of place_order. (The twin whose replay
// sends the notification itself, inside the calls' window, is absorbed by
// the plain comparison, before any cut: the calls' window then holds one
// execution's change exactly, the notification standing in for the late
// one, and only the end shows the second. So it was before this rule.)
func TestAnotherCallsNestedWindowInOneExecution(t *testing.T) {
	for range 3 {
		rep := (&notifyWorld{late: true}).run(t)
		require.Contains(t, rep.Baseline.Trace.Ops[0].StateChange, "notes", "the baseline's notification inside place_order's window")
		r := resultOf(t, rep, ScenarioDuplicateConcurrent)
		var places []*Operation
		for i := range r.Trace.Ops {
			if o := &r.Trace.Ops[i]; o.Name == "place_order" {
				places = append(places, o)
			}
		}
		require.Len(t, places, 2)
		require.True(t, places[0].Overlapped && places[1].Overlapped, "the two place_orders overlapped")
		assert.Empty(t, findings(rep, ""))
		assert.True(t, rep.Safe)
		assert.False(t, r.Inconclusive, "%q", r.Trace.Notes)
		assert.Len(t, notesSaying(r.Trace, "one execution's window in the baseline held"), 1, "%q", r.Trace.Notes)
	}
	rep := (&notifyWorld{late: true, again: true}).run(t)
	assert.Contains(t, findings(rep, ScenarioDuplicateConcurrent), "duplicate_write place_order")
	assert.False(t, rep.Safe)
}
