package runtime

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The call State judges waits for it. One that waits for
// what the agent holds across the call (here a lock; with database/sql, a
// transaction's only connection) stalls the scenario: the stall is bounded,
// and its message says the wait is inside State, not merely "delivery 1 is
// blocked" at a line of the user's snapshot code, which read as the agent
// failing.
func TestStallInsideStateSaysSo(t *testing.T) {
	// A lock the agent holds across its traced call, as a transaction
	// holds its connection; released for good when the test ends, so
	// that the abandoned agent can return.
	held := make(chan struct{}, 1)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	var rows sync.Map
	put := &Op{Name: "put", Kind: KindWrite, Params: []string{"k"}}
	agent := func(ctx context.Context) error {
		held <- struct{}{}
		defer func() { <-held }()
		return traced(ctx, put, []any{"a"}, []any{"a"}, func(context.Context) error {
			rows.Store("a", true)
			return nil
		})
	}
	rep, err := Run(context.Background(), "state-stall", agent,
		State(func() any {
			select {
			case held <- struct{}{}:
				<-held
			case <-stop:
			}
			_, ok := rows.Load("a")
			return ok
		}),
		OnlyScenario(ScenarioBaseline), StallTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var stall string
	for _, f := range rep.Baseline.Findings {
		if f.Code == CodeStalled {
			stall = f.Message
		}
	}
	if stall == "" {
		t.Fatalf("the baseline did not stall: %v", rep.Baseline.Findings)
	}
	if !strings.Contains(stall, "inside the State function") || !strings.Contains(stall, "statestall_test.go") {
		t.Errorf("the stall does not say it waits inside State, where:\n%s", stall)
	}
	if !slices.ContainsFunc(rep.Baseline.Trace.Notes, func(n string) bool { return strings.Contains(n, "State saw of this scenario's writes is left out") }) {
		t.Errorf("no note says the judge's view was left out: %q", rep.Baseline.Trace.Notes)
	}
}
