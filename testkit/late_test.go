package testkit_test

import (
	"context"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// t.Fatal in a Setup ends the test's goroutine with runtime.Goexit before
// the suite's report. The report ends the suite's watch for late calls
// (runtime.Enabled stays true until it), so testkit takes it on the way
// out: the wrappers of later tests take their inactive path again at once,
// not when a GC happens to collect the suite.
func TestFatalInSetupEndsTheWatch(t *testing.T) {
	if runtime.Enabled() {
		t.Skip("another run is active")
	}
	done := make(chan struct{})
	go func() { // the test's goroutine, as far as Goexit goes
		defer close(done)
		var l *tools.Ledger
		setups := 0
		testkit.Run(&fakeT{name: "TestFatal"}, retrier(&l), testkit.Setup(func(context.Context) error {
			if setups++; setups == 2 {
				goruntime.Goexit() // t.Fatal in the first scenario's Setup
			}
			l = &tools.Ledger{}
			return nil
		}), testkit.NoSummary())
	}()
	<-done
	if runtime.Enabled() {
		t.Error("the wrappers stay on their traced path after the suite's test ended")
	}
}

var pairA = &runtime.Op{Name: "a", Kind: runtime.KindWrite, Params: []string{"v"}}
var pairB = &runtime.Op{Name: "b", Kind: runtime.KindWrite, Params: []string{"v"}}

// A finding the suite adds after the scenarios it is about were reported
// (order_variant_outcome, an error, compares the schedules' outcomes once
// all have run) fails TestAgent, as every error finding does. With a
// subtest per schedule (eager, as a fake TB gets), it was only logged.
func TestFindingAddedAfterItsScenariosFailsTheTest(t *testing.T) {
	var mu sync.Mutex
	var order []string
	write := func(ctx context.Context, op *runtime.Op) error {
		c, _ := runtime.Begin(ctx, op, []any{op.Name}, []any{op.Name}, []any{"entity"})
		if err := c.Start(); err != nil {
			return err
		}
		mu.Lock()
		order = append(order, op.Name)
		mu.Unlock()
		return c.Finish(nil)
	}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		for _, op := range []*runtime.Op{pairA, pairB} {
			wg.Add(1)
			go func() { defer wg.Done(); write(ctx, op) }()
		}
		wg.Wait()
		return nil
	}
	ft := &fakeT{name: "TestPair"}
	rep := testkit.TestAgent(ft, agent,
		testkit.Setup(func(context.Context) error { mu.Lock(); order = nil; mu.Unlock(); return nil }),
		testkit.Outcome(func() any { mu.Lock(); defer mu.Unlock(); return append([]string(nil), order...) }),
		testkit.NoSummary())
	if !rep.Has(runtime.CodeOrderVariantOutcome) {
		t.Fatalf("no order_variant_outcome: %v", rep.Findings)
	}
	if !strings.Contains(strings.Join(ft.errors, "\n"), "["+runtime.CodeOrderVariantOutcome+"]") {
		t.Errorf("order_variant_outcome did not fail TestAgent; errors:\n%s", strings.Join(ft.errors, "\n"))
	}
}
