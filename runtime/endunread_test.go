package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

var markOp = &Op{Name: "mark", Kind: KindWrite, Params: []string{"key"}, Idempotent: true}

// TestAnEndThatCouldNotBeReadLeavesTheScenarioInconclusive: a State that
// works in the baseline and around every call, but not at the end of a run
// in which the agent retried (it reads a world the retry left behind in a
// shape it cannot encode). The repeat is judged by its windows alone, and
// nothing compared how the run ended with the baseline: the scenario says
// so and is inconclusive, never a plain pass (fO1's note, rtO #1).
func TestAnEndThatCouldNotBeReadLeavesTheScenarioInconclusive(t *testing.T) {
	for _, breakEnd := range []bool{true, false} {
		var (
			mu     sync.Mutex
			marks  map[string]bool
			broken bool
		)
		agent := func(ctx context.Context) error {
			calls := 0
			var err error
			for range 2 {
				calls++
				err = traced(ctx, markOp, []any{"k"}, []any{"k"}, func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					marks["k"] = true
					return nil
				})
				if err == nil || !errors.Is(err, ErrInjected) {
					break
				}
			}
			if calls > 1 && breakEnd {
				mu.Lock()
				broken = true
				mu.Unlock()
			}
			return err
		}
		rep, err := Run(context.Background(), t.Name(), agent,
			Setup(func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				marks, broken = map[string]bool{}, false
				return nil
			}),
			State(func() any {
				mu.Lock()
				defer mu.Unlock()
				if broken {
					return map[string]any{"c": make(chan int)}
				}
				return map[string]bool{"k": marks["k"]}
			}))
		if err != nil {
			t.Fatal(err)
		}
		var res *Result
		for _, r := range rep.Results {
			if strings.HasPrefix(r.Scenario, "lost_acknowledgement") && res == nil {
				res = r
			}
		}
		if res == nil {
			var names []string
			for _, r := range rep.Results {
				names = append(names, r.Scenario)
			}
			t.Fatalf("no lost_acknowledgement scenario in %q", names)
		}
		noted := false
		for _, n := range res.Trace.Notes {
			noted = noted || strings.Contains(n, "the end of this run could not be read")
		}
		if breakEnd && (!noted || !res.Inconclusive) {
			t.Errorf("end unreadable: inconclusive=%v, notes %q; want inconclusive with the note", res.Inconclusive, res.Trace.Notes)
		}
		if !breakEnd && (noted || res.Inconclusive || !rep.Safe) {
			t.Errorf("end readable: inconclusive=%v safe=%v, notes %q; want a plain pass", res.Inconclusive, rep.Safe, res.Trace.Notes)
		}
	}
}
