package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A Teardown that fails after one scenario: go test failed on it, while
// the report called every scenario safe and said nothing of it (a red
// team's). That scenario is inconclusive now, with a note that names the
// failure.
func TestATeardownThatFailsIsInTheReport(t *testing.T) {
	put := &Op{Name: "put", Kind: KindWrite, Params: []string{"key"}, Idempotent: true}
	calls := 0
	rep, _ := Run(context.Background(), t.Name(), func(ctx context.Context) error {
		return traced(ctx, put, []any{"k"}, []any{"k"}, func(context.Context) error { return nil })
	}, Teardown(func(context.Context) error {
		calls++
		if calls == 3 {
			return errors.New("could not drop the schema")
		}
		return nil
	}))
	if rep == nil {
		t.Fatal("no report")
	}
	found := false
	for _, res := range append([]*Result{rep.Baseline}, rep.Results...) {
		if res == nil || res.Trace == nil {
			continue
		}
		for _, n := range res.Trace.Notes {
			if strings.Contains(n, "Teardown failed after this scenario: could not drop the schema") {
				found = true
				if !res.Inconclusive || res.Safe {
					t.Errorf("%s: the scenario whose Teardown failed is inconclusive %v, safe %v; want inconclusive", res.Scenario, res.Inconclusive, res.Safe)
				}
			}
		}
	}
	if !found {
		t.Error("no scenario's trace notes the failed Teardown")
	}
	if rep.InconclusiveCount == 0 {
		t.Error("the report counts no inconclusive scenario")
	}
}

// A suite run in a bubble the test made (synctest.Test) runs every
// scenario on the bubble's clock: each result says virtual, where each
// said real (a red team's).
func TestASuiteInTheTestsBubbleSaysVirtualClock(t *testing.T) {
	put := &Op{Name: "put", Kind: KindWrite, Params: []string{"key"}, Idempotent: true}
	var rep *Report
	synctest.Test(t, func(t *testing.T) {
		rep, _ = Run(context.Background(), "bubble", func(ctx context.Context) error {
			return traced(ctx, put, []any{"k"}, []any{"k"}, func(context.Context) error {
				time.Sleep(time.Millisecond)
				return nil
			})
		})
	})
	if rep == nil || rep.Baseline == nil {
		t.Fatal("no report")
	}
	for _, res := range append([]*Result{rep.Baseline}, rep.Results...) {
		if res.Clock != ClockVirtual {
			t.Errorf("%s: clock %q, want %q", res.Scenario, res.Clock, ClockVirtual)
		}
	}
}
