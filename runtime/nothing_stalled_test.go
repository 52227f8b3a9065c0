package runtime

import (
	"context"
	"testing"
	"time"
)

// An agent that waits, before its first call, for a model reply that
// never comes (no ctx): the baseline stalls. nothing_traced should not say
// the agent returned an error.
func TestStalledBaselineBeforeAnyCallIsNotAReturnedError(t *testing.T) {
	never := make(chan struct{})
	defer close(never)
	agent := func(ctx context.Context) error { <-never; return nil }
	rep, _ := Run(context.Background(), t.Name(), agent, StallTimeout(200*time.Millisecond))
	for _, f := range rep.Baseline.Findings {
		t.Logf("%s: %s", f.Code, f.Message)
	}
}
