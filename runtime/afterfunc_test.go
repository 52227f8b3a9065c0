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
//
// duplicate_delivery/concurrent is left out: the harness does not wait
// there (its two deliveries run at once, so the goroutine count says
// little, and reading stacks at every return cost a small suite a third
// of its time), and the race remains.
func TestAfterFuncCallsAreTheInvocations(t *testing.T) {
	var wg sync.WaitGroup
	for range 20 {
		put := func(string) {}
		agent := func(ctx context.Context) error {
			if err := tracedPut(ctx, put, "lock"); err != nil {
				return err
			}
			wg.Add(1)
			context.AfterFunc(ctx, func() {
				defer wg.Done()
				tracedPut(context.WithoutCancel(ctx), put, "unlock")
			})
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
			if f.Scenario == ScenarioDuplicateConcurrent {
				continue
			}
			if f.Code == CodeGoroutineLeak || f.Code == CodeFaultNotTriggered {
				t.Fatalf("%s: [%s] %s", f.Scenario, f.Code, f.Message)
			}
		}
		for _, res := range append(rep.Results, base) {
			if res.Scenario == ScenarioDuplicateConcurrent {
				continue
			}
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
