package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// An agent that credits from a goroutine it does not wait for (its
// scenarios then wait for what the invocations left running) and whose
// first use of a library starts that library's service goroutine, which
// lives on after the invocation. Started with GoInfrastructure, it is the
// process's: no scenario reports it as a goroutine the agent left running
// (goroutine_leak) or is inconclusive for it. Started by the agent with a
// plain go statement, it is the agent's, and each scenario that left one
// running says so.
func TestAnInfrastructureGoroutineLeftRunningIsNoLeak(t *testing.T) {
	credit := &Op{Name: "credit", Kind: KindWrite, Params: []string{"user"}}
	for _, infra := range []bool{true, false} {
		stop := make(chan struct{})
		var services, calls sync.WaitGroup
		service := func() { defer services.Done(); <-stop } // until the test ends
		agent := func(ctx context.Context) error {
			services.Add(1)
			if infra {
				GoInfrastructure(service)
			} else {
				go service()
			}
			calls.Go(func() {
				_ = traced(ctx, credit, []any{"u1"}, []any{"u1"}, func(context.Context) error { return nil })
			})
			return nil
		}
		rep, err := Run(context.Background(), t.Name(), agent)
		calls.Wait()
		close(stop)
		services.Wait()
		if err != nil {
			t.Fatal(err)
		}
		var leaks []string
		for _, f := range rep.Findings {
			if f.Code == CodeGoroutineLeak {
				leaks = append(leaks, f.Scenario+": "+f.Message)
			}
		}
		if infra && len(leaks) > 0 {
			t.Errorf("the library's goroutine was taken for one the agent left running: %s", strings.Join(leaks, "\n"))
		}
		if !infra && len(leaks) == 0 {
			t.Errorf("the agent's own goroutine left running was not reported: findings %v", rep.Findings)
		}
	}
}
