package runtime

import (
	"context"
	"sync"
	"testing"
	"time"
)

// An agent that serializes its deliveries on a channel semaphore and makes
// two tool calls in parallel within each: under concurrent duplicate
// delivery, the second delivery waits on the semaphore outside any gate,
// and the first, with both its calls at the gate, must go on alone, call
// by call. The gate once kept one waiting call per delivery, so the second
// call could lose its place and the scenario stalled (12 times in 30).
func TestLockstepWithParallelCallsBehindASemaphore(t *testing.T) {
	for i := range 10 {
		sem := make(chan struct{}, 1)
		put := func(string) {}
		agent := func(ctx context.Context) error {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			defer func() { <-sem }()
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for j, k := range []string{"x", "y"} {
				wg.Add(1)
				go func() { defer wg.Done(); errs[j] = tracedPut(ctx, put, k) }()
			}
			wg.Wait()
			for _, e := range errs {
				if e != nil {
					return e
				}
			}
			return nil
		}
		s := NewSuite("semaphore-parallel", agent, OnlyScenario(ScenarioDuplicateConcurrent), StallTimeout(2*time.Second))
		endSuite(t, s)
		if _, err := s.Baseline(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, sc := range s.Plan() {
			res, err := s.RunScenario(context.Background(), sc)
			if err != nil {
				t.Fatalf("run %d, %s: %v", i, sc.Name, err)
			}
			for _, f := range res.Findings {
				if f.Code == CodeStalled {
					t.Errorf("run %d, %s: %s", i, sc.Name, f.Message)
				}
			}
			if got := len(res.Trace.Ops); got != 4 {
				t.Errorf("run %d, %s: %d calls, want both deliveries' two", i, sc.Name, got)
			}
		}
	}
}
