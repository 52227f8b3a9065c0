package testkit_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// catalog lists its items most recently written first, as a State that
// reads a table ORDER BY updated_at DESC does (or a SELECT without ORDER
// BY after INSERT OR REPLACE, which gives the row a new rowid): every
// write moves its item to the front, whether it changed it or not.
type catalog struct {
	mu    sync.Mutex
	items []catalogItem
}

type catalogItem struct {
	SKU   string `json:"sku"`
	Price int    `json:"price"`
	Qty   int    `json:"qty"`
}

var (
	setPriceOp = &runtime.Op{Name: "set_price", Kind: runtime.KindWrite, Params: []string{"sku", "price"}}
	addStockOp = &runtime.Op{Name: "add_stock", Kind: runtime.KindWrite, Params: []string{"sku", "n"}}
)

// touch applies change to sku and moves it to the front.
func (c *catalog) touch(sku string, change func(*catalogItem)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it := catalogItem{SKU: sku}
	if i := slices.IndexFunc(c.items, func(it catalogItem) bool { return it.SKU == sku }); i >= 0 {
		it = c.items[i]
		c.items = slices.Delete(c.items, i, i+1)
	}
	change(&it)
	c.items = slices.Insert(c.items, 0, it)
}

func (c *catalog) state() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.items)
}

// The agent writes two items, A then B, retrying each once on error. The
// redelivery after a crash at B writes A again, which moves A in front of
// B without changing it: its window holds the same rows in another order.
// That was a duplicate_write of a price set to the value it had
// (crash_restart/set_price#2, duplicate_delivery/sequential; red team,
// an upsert that stamps updated_at, listed by it). A write whose
// executions never made an order their effect is not repeated by moving a
// row; one that adds stock each time is still caught, and the trace says
// why the set was absorbed.
func TestRepeatThatOnlyReordersRowsIsNoDuplicate(t *testing.T) {
	for _, c := range []struct {
		name string
		op   *runtime.Op
		set  func(*catalogItem, int)
		want bool // duplicate_write expected
	}{
		{"a price set", setPriceOp, func(it *catalogItem, v int) { it.Price = v }, false},
		{"stock added", addStockOp, func(it *catalogItem, v int) { it.Qty += v }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cat *catalog
			write := func(ctx context.Context, sku string, v int) error {
				return tracedCall(ctx, c.op, []any{sku, v}, []any{sku}, nil, func(context.Context) error {
					cat.touch(sku, func(it *catalogItem) { c.set(it, v) })
					return nil
				})
			}
			agent := func(ctx context.Context) error {
				for _, w := range []struct {
					sku string
					v   int
				}{{"A", 100}, {"B", 200}} {
					if err := write(ctx, w.sku, w.v); err != nil {
						if err := write(ctx, w.sku, w.v); err != nil {
							return err
						}
					}
				}
				return nil
			}
			rep := testkit.Run(&fakeT{name: "TestRepeatThatOnlyReorders"}, agent,
				testkit.Setup(func(context.Context) error { cat = &catalog{}; return nil }),
				testkit.State(func() any { return cat.state() }))
			got := codesIn(rep, runtime.CodeDuplicateWrite)
			if !c.want {
				if got != "" {
					t.Fatalf("a price set again, its row moved to the front, was counted:\n%s", got)
				}
				noted := false
				for _, r := range rep.Results {
					for _, n := range r.Trace.Notes {
						noted = noted || strings.Contains(n, "only changed the order of entries")
					}
				}
				if !noted {
					t.Error("no trace says a repeat was absorbed because it only reordered rows")
				}
				return
			}
			for _, sc := range []string{"crash_restart/add_stock#2", "duplicate_delivery/sequential"} {
				if !strings.Contains(got, sc+" "+runtime.CodeDuplicateWrite) {
					t.Errorf("%s: no duplicate_write of stock added twice; got:\n%s", sc, got)
				}
			}
		})
	}
}

// accounts opens an account per owner, stamped with the moment it was
// made, as a sink's created_at column is.
type accounts struct {
	mu      sync.Mutex
	opened  map[string]time.Time
	bonuses []string // a welcome bonus per account opened (everyCall: per call)
}

var openAccountOp = &runtime.Op{Name: "open_account", Kind: runtime.KindWrite, Params: []string{"owner"}}

// The agent opens an account for its owner, retrying once on error; the
// sink opens it only if absent and stamps it with time.Now(). The two
// deliveries of duplicate_delivery/concurrent overlap, so their calls are
// judged together against one execution in the baseline: the baseline's
// account made at T0 differed from the cluster's made at T1, and a sink
// that opens an account once got a false duplicate_write there on every
// run (red team: create-if-absent with created_at, a guarded status change
// stamping sent_at, a soft delete stamping deleted_at; with a
// second-resolution CURRENT_TIMESTAMP, on the runs whose baseline and
// scenario fell either side of a second). Compared across runs, a moment
// no call was given is left out; a sink that pays the bonus on every call
// is still caught there, and the moments still count within a run.
func TestMomentsStampedByTheSinkDifferAcrossRuns(t *testing.T) {
	for _, everyCall := range []bool{false, true} {
		t.Run(map[bool]string{false: "opened once", true: "a bonus per call"}[everyCall], func(t *testing.T) {
			var acc *accounts
			open := func(ctx context.Context, owner string) error {
				return tracedCall(ctx, openAccountOp, []any{owner}, []any{owner}, nil, func(context.Context) error {
					time.Sleep(2 * time.Millisecond) // the remote call: the two deliveries overlap
					acc.mu.Lock()
					defer acc.mu.Unlock()
					if _, ok := acc.opened[owner]; !ok {
						acc.opened[owner] = time.Now()
						acc.bonuses = append(acc.bonuses, owner)
					} else if everyCall {
						acc.bonuses = append(acc.bonuses, owner)
					}
					return nil
				})
			}
			agent := func(ctx context.Context) error {
				if err := open(ctx, "ada"); err != nil {
					return open(ctx, "ada")
				}
				return nil
			}
			rep := testkit.Run(&fakeT{name: "TestMomentsStamped"}, agent,
				testkit.Setup(func(context.Context) error { acc = &accounts{opened: map[string]time.Time{}}; return nil }),
				testkit.State(func() any {
					acc.mu.Lock()
					defer acc.mu.Unlock()
					return map[string]any{"opened": maps.Clone(acc.opened), "bonuses": slices.Clone(acc.bonuses)}
				}))
			got := codesIn(rep, runtime.CodeDuplicateWrite)
			concurrent := runtime.ScenarioDuplicateConcurrent + " " + runtime.CodeDuplicateWrite
			if everyCall {
				if !strings.Contains(got, concurrent) {
					t.Errorf("no duplicate_write of a bonus paid per call in %s; got:\n%s", runtime.ScenarioDuplicateConcurrent, got)
				}
				return
			}
			if got != "" {
				t.Errorf("an account opened once, stamped at another moment than in the baseline, was counted:\n%s", got)
			}
			// The calls did overlap: the comparison with one execution
			// judged them, not each by its own window.
			for _, r := range rep.Results {
				if r.Scenario != runtime.ScenarioDuplicateConcurrent {
					continue
				}
				overlapped := false
				for _, o := range r.Trace.Ops {
					overlapped = overlapped || o.Overlapped
				}
				if !overlapped {
					t.Skip("the two deliveries' calls did not overlap on this run")
				}
			}
		})
	}
}

var payOnceOp = &runtime.Op{Name: "pay", Kind: runtime.KindWrite, Params: []string{"id"}}

// The agent pays two bills, each attempt under a deadline of its own (10
// ms), and retries an attempt whose deadline ran out. The sink's first
// call for a bill is slow (30 ms, a cold connection) and cannot be
// interrupted: the payment lands, then the tool reports the context's
// error. A keyed sink pays a bill once. In the baseline each bill's first
// call fails yet lands, and its retry changes nothing; only successful
// calls had windows to compare with, so the payment was seen in no
// execution of the baseline, and where the two deliveries overlapped the
// keyed retries were counted: a false duplicate_write in
// duplicate_delivery/concurrent on every run (red team: per-attempt
// timeouts; with VirtualTime in six scenarios). A call that failed after
// it landed made one execution's change; a sink that pays every call is
// still caught.
func TestRetryAfterADeadlineThatRanOutAsTheWriteLanded(t *testing.T) {
	for _, keyed := range []bool{true, false} {
		t.Run(map[bool]string{true: "keyed", false: "a payment per call"}[keyed], func(t *testing.T) {
			var (
				mu   sync.Mutex
				seen map[string]bool
				paid map[string]int
			)
			pay := func(ctx context.Context, id string) error {
				return tracedCall(ctx, payOnceOp, []any{id}, []any{id}, nil, func(ctx context.Context) error {
					mu.Lock()
					slow := !seen[id]
					seen[id] = true
					mu.Unlock()
					if slow {
						time.Sleep(30 * time.Millisecond)
					}
					mu.Lock()
					if !keyed || paid[id] == 0 {
						paid[id]++
					}
					mu.Unlock()
					return ctx.Err()
				})
			}
			agent := func(ctx context.Context) error {
				for _, id := range []string{"a1", "a2"} {
					var err error
					for range 4 {
						actx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
						err = pay(actx, id)
						cancel()
						if !errors.Is(err, context.DeadlineExceeded) {
							break
						}
					}
					if err != nil {
						return err
					}
				}
				return nil
			}
			rep := testkit.Run(&fakeT{name: "TestRetryAfterADeadline"}, agent,
				testkit.Setup(func(context.Context) error {
					mu.Lock()
					seen, paid = map[string]bool{}, map[string]int{}
					mu.Unlock()
					return nil
				}),
				testkit.State(func() any { mu.Lock(); defer mu.Unlock(); return maps.Clone(paid) }))
			got := codesIn(rep, runtime.CodeDuplicateWrite)
			if keyed {
				if got != "" {
					t.Fatalf("a keyed payment, retried after its deadline ran out as it landed, was counted:\n%s", got)
				}
				return
			}
			for _, sc := range []string{runtime.ScenarioBaseline, runtime.ScenarioDuplicateConcurrent, runtime.ScenarioDuplicateSeq} {
				if !strings.Contains(got, sc+" "+runtime.CodeDuplicateWrite) {
					t.Errorf("%s: no duplicate_write of a payment made per call; got:\n%s", sc, got)
				}
			}
		})
	}
}
