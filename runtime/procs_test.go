package runtime

import (
	"context"
	goruntime "runtime"
	"sync"
	"testing"
)

// The harness leaves the program's processors alone: an agent that sizes
// its parallelism by runtime.GOMAXPROCS(0) (errgroup.SetLimit, a pool
// made in Setup) must run its calls side by side in the suite as it does
// in production, and the race detector must see the goroutines of
// duplicate_delivery/concurrent run in parallel. A suite on one processor
// (dbc7898, withdrawn) ran 1.9 times faster at GOMAXPROCS=2, and review
// showed it missed the concurrent writes of such an agent in 20 runs of 20
// and hid the agent's own data races from -race in all 60 runs.
func TestAnInvocationHasTheProgramsProcessors(t *testing.T) {
	prev := goruntime.GOMAXPROCS(2) // two at least, whatever the machine
	t.Cleanup(func() { goruntime.GOMAXPROCS(prev) })
	s := newStore()
	var (
		mu   sync.Mutex
		seen []int
	)
	agent := func(ctx context.Context) error {
		mu.Lock()
		seen = append(seen, goruntime.GOMAXPROCS(0))
		mu.Unlock()
		return s.putTraced(ctx, "a", 1)
	}
	if _, err := Run(context.Background(), "procs", agent, Setup(func(context.Context) error { s = newStore(); return nil })); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 3 {
		t.Fatalf("%d invocations, want the baseline's and the scenarios'", len(seen))
	}
	for i, n := range seen {
		if n != 2 {
			t.Fatalf("invocation %d ran with GOMAXPROCS %d, want the program's 2", i+1, n)
		}
	}
}
