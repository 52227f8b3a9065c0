package runtime

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A crash scenario whose redelivery stalls (it waits for a reply that
// never comes), and which, cancelled, returns nil as agents that treat
// cancellation as a clean shutdown do. The scenario is stalled: it
// proves nothing, and must not also blame the agent for a write it
// "claimed" but never made.
func TestStalledRedeliveryIsNotAClaimOfSuccess(t *testing.T) {
	put := &Op{Name: "put", Kind: KindWrite, Params: []string{"k"}, Idempotent: true}
	var deliveries atomic.Int32
	never := make(chan struct{})
	agent := func(ctx context.Context) error {
		n := deliveries.Add(1)
		if err := traced(ctx, put, []any{"a"}, []any{"a"}, func(context.Context) error { return nil }); err != nil {
			return err
		}
		if n == 2 {
			select {
			case <-never:
			case <-ctx.Done():
				return nil // shut down cleanly
			}
		}
		return traced(ctx, put, []any{"b"}, []any{"b"}, func(context.Context) error { return nil })
	}
	rep, err := Run(context.Background(), t.Name(), agent, ExactlyOnce(), StallTimeout(300*time.Millisecond),
		Setup(func(context.Context) error { deliveries.Store(0); return nil }))
	if err != nil {
		t.Log(err)
	}
	for _, r := range rep.Results {
		var codes []string
		for _, f := range r.Findings {
			codes = append(codes, f.Code)
		}
		if strings.Contains(strings.Join(codes, " "), "stalled") {
			t.Logf("%s: %v error=%q", r.Scenario, codes, r.Error)
			for _, f := range r.Findings {
				if f.Code != CodeStalled && f.Severity == SeverityError {
					t.Errorf("%s: a stalled scenario also reports %s: %s", r.Scenario, f.Code, f.Message)
				}
			}
		}
	}
}
