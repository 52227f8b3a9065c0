package runtime

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A fault scenario runs its deliveries without gates, watched by a timer
// (stallWatch). An agent that stalls in one scenario fails that scenario
// alone, in bounded time, naming where it is blocked; the others run.
func TestUngatedScenarioStalls(t *testing.T) {
	for _, tc := range []struct {
		name     string
		obeysCtx bool // the stalled agent returns once its context is cancelled
		leftRun  bool // the report says the agent was left running
	}{
		{"returns when cancelled", true, false},
		{"never returns", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			block := make(chan struct{})
			defer close(block)
			s := newStore()
			var runs atomic.Int32
			agent := func(ctx context.Context) error {
				err := s.putTraced(ctx, "k", 1)
				if err == nil {
					return nil
				}
				// The acknowledgement was lost: this agent waits for
				// something that never comes instead of retrying.
				runs.Add(1)
				if tc.obeysCtx {
					select {
					case <-block:
					case <-ctx.Done():
						return ctx.Err()
					}
					return nil
				}
				<-block
				return nil
			}
			start := time.Now()
			rep, _ := Run(context.Background(), "stall", agent,
				Setup(func(context.Context) error { s = newStore(); return nil }),
				StallTimeout(100*time.Millisecond))
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the suite took %s", d)
			}
			var stalled []*Result
			for _, res := range rep.Results {
				for _, f := range res.Findings {
					if f.Code == CodeStalled {
						stalled = append(stalled, res)
					}
				}
			}
			if len(stalled) == 0 {
				t.Fatalf("no scenario stalled; results: %d", len(rep.Results))
			}
			for _, res := range stalled {
				if !res.Inconclusive || res.Safe {
					t.Errorf("%s: a stalled scenario is inconclusive and not safe", res.Scenario)
				}
				msg := res.Findings[len(res.Findings)-1].Message
				for _, f := range res.Findings {
					if f.Code == CodeStalled {
						msg = f.Message
					}
				}
				if !strings.Contains(msg, "no progress for 100ms") || !strings.Contains(msg, "stall_test.go:") {
					t.Errorf("%s: the stall does not say what is blocked where: %s", res.Scenario, msg)
				}
				if got := strings.Contains(msg, "left running"); got != tc.leftRun {
					t.Errorf("%s: left running said %v, want %v: %s", res.Scenario, got, tc.leftRun, msg)
				}
				// The stall is the scenario's, not a delivery's: the
				// error names no delivery the scenario did not make.
				if !strings.HasSuffix(res.Error, "stalled") || strings.Contains(res.Error, "delivery 2") && res.Trace.Invocations < 2 {
					t.Errorf("%s: error %q, with %d deliveries", res.Scenario, res.Error, res.Trace.Invocations)
				}
			}
			// The scenarios after the stalled ones ran: every planned
			// scenario has its result.
			if want := len(rep.Results); want < 5 {
				t.Errorf("only %d scenarios ran", want)
			}
			if len(stalled) == len(rep.Results) {
				t.Errorf("every scenario stalled, the unaffected ones too")
			}
		})
	}
}
