package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testRetryWait stands for a retry loop's back-off (cenkalti/backoff's
// Retry, retry-go's Do): a select on a timer and the caller's context.
func testRetryWait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backoffAgent calls the hook's write and, when it fails (the suite's
// lost_request), backs off 2.5 s, past the stall bound, and calls it
// again. With stuck, a worker it started first waits for good on never,
// and the agent waits for it after the back-off.
func backoffAgent(never chan struct{}, stuck bool) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		done := make(chan struct{})
		if stuck {
			go func() {
				select {
				case <-never: // a webhook that never comes
				case <-ctx.Done():
				}
				close(done)
			}()
		} else {
			close(done)
		}
		if err := callHook(ctx); err != nil {
			if err := testRetryWait(ctx, 2500*time.Millisecond); err != nil {
				return err
			}
			<-done
			return callHook(ctx)
		}
		return nil
	}
}

// A correct agent whose retry loop backs off past the stall bound is slow,
// not stuck: the stall says it sleeps in a retry loop's back-off, for how
// long at least, and that a longer StallTimeout is the remedy, and the
// scenario is inconclusive, not unsafe (red team rtW #8: cenkalti/backoff
// waiting 12 s, UNSAFE with "blocked in a select at agent.go:79"). Where
// another goroutine of the scenario truly waits, the stall stays an error.
func TestAStallInARetryBackoffIsSlowNotStuck(t *testing.T) {
	defer func(saved []string) { timedWaits = saved }(timedWaits)
	timedWaits = append(timedWaits[:len(timedWaits):len(timedWaits)], "github.com/agentidem/agentidem-go/runtime.testRetryWait")
	never := make(chan struct{})
	defer close(never)
	for _, stuck := range []bool{false, true} {
		name := map[bool]string{false: "only the back-off", true: "and a goroutine stuck"}[stuck]
		t.Run(name, func(t *testing.T) {
			rep, err := Run(context.Background(), t.Name(), backoffAgent(never, stuck),
				StallTimeout(time.Second), OnlyScenario("lost_request/refund_hook#1"))
			require.NoError(t, err)
			var res *Result
			for _, r := range rep.Results {
				if r.Scenario == "lost_request/refund_hook#1" {
					res = r
				}
			}
			require.NotNil(t, res)
			var stall *Finding
			for i := range res.Findings {
				if res.Findings[i].Code == CodeStalled {
					stall = &res.Findings[i]
				}
			}
			require.NotNil(t, stall, "the scenario stalled: %+v", res.Findings)
			t.Log(stall.Message)
			assert.Contains(t, stall.Message, "in a retry loop's back-off or a rate limiter's wait, asleep on a timer at retrywait_test.go:")
			if stuck {
				assert.Equal(t, SeverityError, stall.Severity, "a goroutine truly waits")
				assert.False(t, res.Safe)
				assert.NotContains(t, stall.Message, "slow, not stuck")
				return
			}
			assert.Contains(t, stall.Message, "was not stuck but asleep for ")
			assert.Contains(t, stall.Message, "raise the bound with StallTimeout above the back-off's longest wait")
			assert.Contains(t, stall.Message, "slow, not stuck, and nothing unsafe was seen")
			assert.Equal(t, SeverityWarning, stall.Severity)
			assert.True(t, res.Inconclusive)
			assert.False(t, res.Safe)
			assert.True(t, rep.Safe, "no error finding: inconclusive, not unsafe")
			for _, f := range res.Findings {
				assert.NotEqual(t, SeverityError, f.Severity, "%s: %s", f.Code, f.Message)
			}
		})
	}
}
