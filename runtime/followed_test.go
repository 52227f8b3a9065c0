package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// An agent makes three parallel reads of one entity, a goroutine each. In
// the runs late says, the goroutine of c first waits for a goroutine older
// than the suite (a worker of the test's, as rtk/poolpar's executor
// started at package init), which answers after 100 ms. On real time the
// scheduler does not watch goroutines older than the scenario, and takes
// c's goroutine, parked on a channel, for quiet after parkedGrace (10 ms):
// the round is played with a and b, and c reaches its start gate after
// it, as c's worker did in a process of thousands of goroutines in 3 of 20
// explorations of rtk/poolpar (red team rtK). Here late alone decides it.
type lateExecutor struct {
	wake chan chan struct{} // to the older worker
	mu   sync.Mutex
	ran  []string // the order the tools' bodies ran in
	runs atomic.Int64
	late func(run int64) bool
}

var followOps = []*Op{
	{Name: "a", Kind: KindRead, Params: []string{"k"}},
	{Name: "b", Kind: KindRead, Params: []string{"k"}},
	{Name: "c", Kind: KindRead, Params: []string{"k"}},
}

// newLateExecutor starts the older worker, which the test's end stops.
func newLateExecutor(t *testing.T, late func(run int64) bool) *lateExecutor {
	e := &lateExecutor{wake: make(chan chan struct{}), late: late}
	go func() {
		for done := range e.wake {
			time.Sleep(100 * time.Millisecond)
			close(done)
		}
	}()
	t.Cleanup(func() { close(e.wake) })
	return e
}

// agent makes a, b and c at once and waits for the three answers.
func (e *lateExecutor) agent(ctx context.Context) error {
	late := e.late(e.runs.Add(1))
	replies := make([]chan error, len(followOps))
	for i, op := range followOps {
		replies[i] = make(chan error, 1)
		go func() {
			if late && op.Name == "c" {
				done := make(chan struct{})
				e.wake <- done
				<-done
			}
			replies[i] <- traced(ctx, op, []any{"k"}, nil, func(context.Context) error {
				e.mu.Lock()
				e.ran = append(e.ran, op.Name)
				e.mu.Unlock()
				return nil
			})
		}()
	}
	var errs []error
	for _, r := range replies {
		errs = append(errs, <-r)
	}
	return errors.Join(errs...)
}

// bodyOrder is the invariant of an agent with a bug only a late order
// shows: b's body ran first, then c's, then a's (the starts s1s2s0, from
// the 43rd order of 90 depth first, after the 30 that start with s0 and
// the 12 with s1s0). A run whose round missed c runs a and b, then c: it
// never shows it.
func (e *lateExecutor) bodyOrder(*Trace) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if slices.Equal(e.ran, []string{"b", "c", "a"}) {
		return fmt.Errorf("b, c, a")
	}
	return nil
}

// exploreLate runs the baseline and the interleavings of the executor's
// agent, with the invariant that a late order breaks when buggy.
func exploreLate(t *testing.T, e *lateExecutor, buggy bool) (*Exploration, *Report, []*Result) {
	t.Helper()
	opts := []Option{Setup(func(context.Context) error {
		e.mu.Lock()
		e.ran = nil
		e.mu.Unlock()
		return nil
	})}
	if buggy {
		opts = append(opts, Invariant("bodies not b, c, a", e.bodyOrder))
	}
	s := NewSuite(t.Name(), e.agent, opts...)
	ctx := context.Background()
	if _, err := s.Baseline(ctx); err != nil {
		t.Fatalf("baseline: %v", err)
	}
	if !s.Parallel(ctx) {
		t.Fatal("no parallel calls")
	}
	var ran []*Result
	ex, err := s.Interleavings(ctx, func(r *Result) { ran = append(ran, r) })
	if err != nil {
		t.Logf("interleavings: %v", err)
	}
	return ex, s.Report(), ran
}

// The agent runs are numbered from the baseline's (1); the interleavings'
// are the listed order (2), its reverse (3), then the orders depth first,
// order k in run k+3 while no run is repeated. Run 13 is order 10: a
// round of two calls there has 6 orders, all of them before 11, and the
// exploration ended on it.
const lateOrderRun = 13

// A call that misses its gate in one run, as on the loaded machine: the
// schedule runs again, whole, and the exploration goes on to every order.
// Before, it ended there, with 12 of 90 orders run, and said "Ran every
// order ...: 90 orders".
func TestAScheduleWhoseRoundMissedACallRunsAgain(t *testing.T) {
	e := newLateExecutor(t, func(run int64) bool { return run == lateOrderRun })
	ex, rep, ran := exploreLate(t, e, false)
	if !ex.Exhaustive || ex.Hazard != "" || ex.Explored != 90 || ex.Space != 90 {
		t.Errorf("exploration %+v, want every one of the 90 orders run", ex)
	}
	if got, want := ex.String(), "Ran every order of the agent's parallel calls that may change the outcome: 90 orders (1 round of calls in flight together)."; got != want {
		t.Errorf("legend:\n got %s\nwant %s", got, want)
	}
	again := 0
	for _, r := range ran {
		if r.Inconclusive || !r.Safe {
			t.Errorf("%s: inconclusive or unsafe: %s", r.Scenario, r.Error)
		}
		for _, n := range r.Trace.Notes {
			if strings.Contains(n, "this schedule ran 2 times: round 1 held 2 calls (a, b) where the round its order was chosen from held 3 (a, b, c): c had not reached its start gate when the round was played") {
				again++
			}
		}
	}
	if again == 0 {
		t.Errorf("no schedule says it ran again for c")
	}
	if !rep.Safe {
		t.Errorf("report not safe: %d unsafe, %d inconclusive", rep.UnsafeCount, rep.InconclusiveCount)
	}
}

// A call that misses its gate in every run of a schedule: the exploration
// stops there, says which schedule, which call and what to do, is not
// exhaustive, and its last schedule is inconclusive. Before, it ended as
// above, exhaustive.
func TestAScheduleThatNeverHoldsItsRoundStopsTheExploration(t *testing.T) {
	e := newLateExecutor(t, func(run int64) bool { return run >= lateOrderRun })
	ex, rep, ran := exploreLate(t, e, false)
	if ex.Exhaustive || ex.Explored >= 90 {
		t.Errorf("exploration %+v claims every order", ex)
	}
	for _, want := range []string{
		"could not be run as chosen: in 3 runs of it, its rounds were not the ones its order was chosen from (in the last, round 1 held 2 calls (a, b) where the round its order was chosen from held 3 (a, b, c): c had not reached its start gate when the round was played), so the orders after it were not run and not every order ran",
		"runtime.Sending",
	} {
		if !strings.Contains(ex.Hazard, want) {
			t.Errorf("hazard %q\nwant it to say %q", ex.Hazard, want)
		}
	}
	if got := ex.String(); !strings.HasPrefix(got, fmt.Sprintf("Scheduling stopped after %d schedules: schedule ", ex.Explored)) || strings.Contains(got, "Ran every order") {
		t.Errorf("legend: %s", got)
	}
	last := ran[len(ran)-1]
	if !last.Inconclusive || last.Safe || !strings.Contains(last.Error, "could not be run as chosen") {
		t.Errorf("last schedule %s: inconclusive %v, safe %v, error %q", last.Scenario, last.Inconclusive, last.Safe, last.Error)
	}
	if rep.InconclusiveCount == 0 {
		t.Errorf("report conclusive (safe %v): no scenario inconclusive", rep.Safe)
	}
}

// Never silently safe: an agent whose bug only a late order shows (the
// 43rd), with a call that misses its gate in order 10. The exploration
// goes on past the miss and finds the bug; where the miss is in every run
// from order 10 on, the suite is inconclusive (Report.Safe counts error
// findings only, as the AgentIdem report's; testkit's verdict is
// INCONCLUSIVE). Before, it ended at order
// 10, saying every order ran, and the report was safe. The same agent
// without the bug passes, in the first case (the test above).
func TestABugInALateOrderIsNotPassedForAMissedGate(t *testing.T) {
	t.Run("once", func(t *testing.T) {
		e := newLateExecutor(t, func(run int64) bool { return run == lateOrderRun })
		ex, rep, _ := exploreLate(t, e, true)
		if rep.Safe || !rep.Has(CodeInvariantFailed) {
			t.Errorf("report safe %v, invariant_failed %v (explored %d)", rep.Safe, rep.Has(CodeInvariantFailed), ex.Explored)
		}
	})
	t.Run("every run after", func(t *testing.T) {
		e := newLateExecutor(t, func(run int64) bool { return run >= lateOrderRun })
		ex, rep, _ := exploreLate(t, e, true)
		if rep.InconclusiveCount == 0 && !rep.Has(CodeInvariantFailed) {
			t.Errorf("report safe and conclusive: %d inconclusive, no invariant_failed (explored %d)", rep.InconclusiveCount, ex.Explored)
		}
		if ex.Exhaustive {
			t.Errorf("exploration %+v claims every order", ex)
		}
	})
}

// Two calls on different entities commute: the space holds one order, and
// the reverse of the listed order runs besides (it returns their answers
// in the other order). The legend counts the one order and tells the two
// schedules apart. Before, it read "Ran every order ...: 1 order" after 2
// schedules had run (red team rtK, rtk/shape).
func TestTheLegendCountsTheReverseBesideTheOrders(t *testing.T) {
	quote := &Op{Name: "quote", Kind: KindWrite, Params: []string{"sku"}, Idempotent: true}
	reserve := &Op{Name: "reserve", Kind: KindWrite, Params: []string{"sku"}, Idempotent: true}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, call := range []struct {
			op  *Op
			sku string
		}{{quote, "a"}, {reserve, "b"}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, _ := Begin(ctx, call.op, []any{call.sku}, []any{call.sku}, []any{call.sku})
				if errs[i] = c.Start(); errs[i] != nil {
					return
				}
				errs[i] = c.Finish(nil)
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	s := NewSuite(t.Name(), agent)
	endSuite(t, s)
	ctx := context.Background()
	if _, err := s.Baseline(ctx); err != nil {
		t.Fatal(err)
	}
	var ran []string
	ex, err := s.Interleavings(ctx, func(r *Result) { ran = append(ran, r.Schedule) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ran, []string{"s0s1f0f1", "s0s1f1f0"}) || ex.Space != 1 || ex.Explored != 2 || !ex.Exhaustive {
		t.Errorf("ran %q, exploration %+v", ran, *ex)
	}
	want := "Ran every order of the agent's parallel calls that may change the outcome: 1 order (1 round of calls in flight together), and the reverse of the listed order, which reverses calls that commute too (the agent sees their answers in the other order): 2 schedules in all. The other 5 of the 6 possible only swap calls on different entities, which commute, so they were not run, but for that reverse."
	if got := ex.String(); got != want {
		t.Errorf("legend:\n got %s\nwant %s", got, want)
	}
}
