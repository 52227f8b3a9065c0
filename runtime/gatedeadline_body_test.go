package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// A dispatcher (rtS #6) bounds each attempt of a call with a deadline set
// before the call, retries a call that timed out, and runs one turn's four
// slow writes in goroutines: in production they run together and each
// ends in time. Under the listed schedule the suite runs their tools one
// after another, so the later calls' deadlines run out in their tools,
// after the start gate held them, and the retry sends them again: the
// baseline is not the agent's fault-free behaviour, and is inconclusive,
// naming the call, where it was planned from before (six calls, faults on
// the retries). With a deadline that covers the tools run one after
// another, the same agent is judged.
func TestDeadlineRanOutInTheToolAfterTheStartGateHeldIt(t *testing.T) {
	post := &runtime.Op{Name: "post_entry", Kind: runtime.KindWrite, Params: []string{"account"}}
	const body = 300 * time.Millisecond
	var (
		mu      sync.Mutex
		entries map[string]int
	)
	write := func(ctx context.Context, account string) (err error) {
		c, cctx := runtime.Begin(ctx, post, []any{account}, []any{account}, nil)
		if err := c.Start(); err != nil {
			return err
		}
		func() {
			defer c.Recover(&err)
			select {
			case <-time.After(body):
			case <-cctx.Done():
				err = cctx.Err()
				return
			}
			mu.Lock()
			if entries[account] == 0 { // keyed by account: a repeat is replayed
				entries[account]++
			} else {
				runtime.MarkReplayed(cctx)
			}
			mu.Unlock()
		}()
		return c.Finish(err)
	}
	agent := func(perCall time.Duration) func(context.Context) error {
		return func(ctx context.Context) error {
			accounts := []string{"alice", "bob", "carol", "dave"}
			errs := make([]error, len(accounts))
			var wg sync.WaitGroup
			for i, a := range accounts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for attempt := 0; attempt < 3; attempt++ {
						actx, cancel := context.WithTimeout(ctx, perCall)
						errs[i] = write(actx, a)
						cancel()
						if !errors.Is(errs[i], context.DeadlineExceeded) {
							return
						}
					}
				}()
			}
			wg.Wait()
			return errors.Join(errs...)
		}
	}
	opts := []runtime.Option{
		runtime.Setup(func(context.Context) error {
			mu.Lock()
			entries = map[string]int{}
			mu.Unlock()
			return nil
		}),
		runtime.State(func() any {
			mu.Lock()
			defer mu.Unlock()
			m := map[string]int{}
			for k, v := range entries {
				m[k] = v
			}
			return m
		}),
		runtime.OnlyScenario(runtime.ScenarioBaseline),
	}
	// Each attempt has 500 ms for a 300 ms tool (rtS #6): enough for calls run together,
	// short for the third and fourth run one after another.
	rep, err := runtime.Run(context.Background(), t.Name(), agent(body*5/3), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Baseline == nil || !rep.Baseline.Inconclusive {
		t.Fatalf("short deadline: baseline not inconclusive (%d calls); notes %q", len(rep.Baseline.Trace.Ops), rep.Baseline.Trace.Notes)
	}
	notes := strings.Join(rep.Baseline.Trace.Notes, "\n")
	if !strings.Contains(notes, "post_entry's deadline ran short: the harness held the call at its start gate for") {
		t.Errorf("short deadline: no note names the call whose deadline the gate ate into:\n%s", notes)
	}
	rep, err = runtime.Run(context.Background(), t.Name(), agent(6*body), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Baseline == nil || rep.Baseline.Inconclusive || !rep.BaselineSucceeded {
		t.Fatalf("long deadline: baseline inconclusive or failed; notes %q", rep.Baseline.Trace.Notes)
	}
	if n := len(rep.Baseline.Trace.Ops); n != 4 {
		t.Errorf("long deadline: %d calls, want the turn's 4", n)
	}
}
