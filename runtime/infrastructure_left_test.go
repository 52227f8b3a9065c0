package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// An agent that credits from a goroutine it does not wait for (its
// scenarios then wait for what the invocations left running) and whose
// first use of a library starts that library's service goroutine, which
// lives on after the invocation. Started with GoInfrastructure, it is the
// process's: no scenario reports it as a goroutine the agent left running
// (goroutine_leak) or is inconclusive for it. Started by the agent with a
// plain go statement, it is the agent's, and each scenario that left one
// running says so.
//
// The credit is made once the invocation has returned, as the suite sees
// it: the scenarios wait for what the invocations left running only where
// the baseline's goroutine called after its invocation returned. Made at
// once, its call came before the return in about 1 baseline of 20 under
// -race, where the plain go statement's goroutine, which makes no call,
// was rightly no leak, and the test failed.
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
			inv, _, _, _, _, _ := lookup(ctx, credit)
			calls.Go(func() {
				for deadline := time.Now().Add(2 * time.Second); inv != nil && !inv.returned.Load() && time.Now().Before(deadline); {
					time.Sleep(100 * time.Microsecond)
				}
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
