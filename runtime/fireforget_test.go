package runtime

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// An agent that credits in a goroutine it does not wait for (fire and
// forget) and returns: when it is delivered again, the user is credited
// twice. The goroutine is ready to run when the invocation returns; the
// harness waits for it to end or block before it ends the run, so its call
// is traced in every run, and every run finds the duplicate. Before, the
// Go scheduler decided: the call came before the run ended (traced, a
// duplicate_write) or after (late: the scenario inconclusive, its fault
// not fired), and the same agent was unsafe on some runs and passed on
// others (10 of 20 runs of a testkit suite had no error finding).
func TestFireAndForgetCallIsTracedEveryRun(t *testing.T) {
	credit := &Op{Name: "credit", Kind: KindWrite, Params: []string{"user"}}
	for run := range 30 {
		var (
			mu      sync.Mutex
			credits int
			wg      sync.WaitGroup
		)
		agent := func(ctx context.Context) error {
			wg.Go(func() {
				_ = traced(ctx, credit, []any{"u1"}, []any{"u1"}, func(context.Context) error {
					mu.Lock()
					credits++
					mu.Unlock()
					return nil
				})
			})
			return nil
		}
		rep, err := Run(context.Background(), "fire-and-forget", agent, Setup(func(context.Context) error {
			mu.Lock()
			credits = 0
			mu.Unlock()
			return nil
		}))
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range rep.Results {
			codes := findings(rep, res.Scenario)
			switch {
			case res.Inconclusive || !res.FaultFired && res.Fault != nil:
				t.Fatalf("run %d, %s: inconclusive (findings %v): the credit came after the run ended", run+1, res.Scenario, codes)
			case res.Kind == ScenarioDuplicateSeq && !slices.Contains(codes, CodeDuplicateWrite+" credit"):
				t.Fatalf("run %d, %s: findings %v; want the duplicate credit", run+1, res.Scenario, codes)
			}
		}
	}
}
