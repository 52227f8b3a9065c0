package runtime

import (
	"context"
	"sync"
	"testing"
)

// An agent that releases what it holds when its request's context ends
// (context.AfterFunc with context.WithoutCancel: the standard cleanup
// idiom) starts no goroutine itself: the harness cancels the invocation's
// context when it returns, and context runs the callback in a goroutine
// of its own. Its call is the invocation's, in every scenario and every
// run of the suite; before, whether it landed before the run ended
// (traced) or after (a late call, a goroutine_leak warning telling the
// agent to wait for goroutines it never started) was a race.
// The same holds in duplicate_delivery/concurrent, whose deliveries run
// at once: the harness waits for the callbacks once both have returned.
func TestAfterFuncCallsAreTheInvocations(t *testing.T) {
	var wg sync.WaitGroup
	for range 20 {
		put := func(string) {}
		agent := func(ctx context.Context) error {
			if err := tracedPut(ctx, put, "lock"); err != nil {
				return err
			}
			unlockWhenDone(ctx, &wg, put)
			return nil
		}
		s := NewSuite("afterfunc", agent)
		base, err := s.Baseline(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n := len(base.Trace.Ops); n != 2 {
			t.Fatalf("the baseline traced %d calls, want lock and unlock", n)
		}
		for _, sc := range s.Plan() {
			if _, err := s.RunScenario(context.Background(), sc); err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
		rep := s.Report()
		for _, f := range rep.Findings {
			if f.Code == CodeGoroutineLeak || f.Code == CodeFaultNotTriggered {
				t.Fatalf("%s: [%s] %s", f.Scenario, f.Code, f.Message)
			}
		}
		for _, res := range append(rep.Results, base) {
			// Every invocation that got its lock registered the release.
			locked, unlocks := 0, 0
			for _, o := range res.Trace.Ops {
				switch {
				case o.Identity == `"lock"` && o.Error == "" && o.Observation == ObservationReceived:
					locked++
				case o.Identity == `"unlock"`:
					unlocks++
				}
			}
			if unlocks != locked {
				t.Fatalf("%s: %d unlocks traced for %d locks taken", res.Scenario, unlocks, locked)
			}
		}
	}
}

// Under a scheduler (interleavings), the harness does not wait after the
// invocation returns: the callbacks' goroutines are the scenario's, and
// the scheduler's quiescence waits for their calls to reach a gate before
// the run ends. This pins that the unlock is traced in every schedule.
func TestAfterFuncCallsUnderSchedules(t *testing.T) {
	for range 10 {
		var wg sync.WaitGroup
		put := func(string) {}
		agent := func(ctx context.Context) error {
			var calls sync.WaitGroup
			for _, k := range []string{"x", "y"} {
				calls.Add(1)
				go func() { defer calls.Done(); tracedPut(ctx, put, k) }()
			}
			calls.Wait()
			unlockWhenDone(ctx, &wg, put)
			return nil
		}
		s := NewSuite("afterfunc-schedules", agent)
		if _, err := s.Baseline(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !s.Parallel(context.Background()) {
			t.Fatal("the two calls were not seen in parallel")
		}
		if _, err := s.Interleavings(context.Background(), func(*Result) {}); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		rep := s.Report()
		if rep.Has(CodeGoroutineLeak) {
			t.Fatalf("findings %v", rep.Findings)
		}
		scheduled := 0
		for _, res := range rep.Results {
			if res.Schedule == "" {
				continue
			}
			scheduled++
			unlocks := 0
			for _, o := range res.Trace.Ops {
				if o.Identity == `"unlock"` {
					unlocks++
				}
			}
			if unlocks != 1 {
				t.Fatalf("%s: %d unlocks traced, want 1", res.Scenario, unlocks)
			}
		}
		if scheduled == 0 {
			t.Fatal("no schedule ran")
		}
	}
}

// unlockWhenDone registers the cleanup idiom: when the invocation's
// context ends, a callback unlocks, with a context that outlives it.
func unlockWhenDone(ctx context.Context, wg *sync.WaitGroup, put func(string)) {
	wg.Add(1)
	context.AfterFunc(ctx, func() {
		defer wg.Done()
		tracedPut(context.WithoutCancel(ctx), put, "unlock")
	})
}
