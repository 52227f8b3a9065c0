package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A planned fault that follows a call's success (a lost acknowledgement, a
// crash) does not fire when the call fails by itself in that scenario; the
// finding says which fault could not follow, and why.
func TestFaultAfterACallThatFailedByItselfSaysWhichFault(t *testing.T) {
	op := &Op{Name: "attach", Kind: KindWrite, Params: []string{"invoice"}}
	runs := 0
	attach := func(ctx context.Context) error {
		c, _ := Begin(ctx, op, []any{"inv-1"}, nil, nil)
		if err := c.Start(); err != nil {
			return err
		}
		var err error
		if runs > 1 { // the baseline's run succeeds, every later one fails
			err = errors.New("404 no such invoice")
		}
		return c.Finish(err)
	}
	agent := func(ctx context.Context) error { return attach(ctx) }
	rep, err := Run(context.Background(), "unfired", agent, Setup(func(context.Context) error { runs++; return nil }))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"lost_acknowledgement/attach#1": "attach failed by itself (404 no such invoice), so its acknowledgement could not be lost",
		"crash_restart/attach#1":        "attach failed by itself (404 no such invoice), so no crash could follow its success",
	}
	for _, r := range rep.Results {
		w, ok := want[r.Scenario]
		if !ok {
			continue
		}
		delete(want, r.Scenario)
		found := false
		for _, f := range r.Findings {
			if f.Code == CodeFaultNotTriggered {
				found = true
				if !strings.Contains(f.Message, w) {
					t.Errorf("%s: %s\nwant it to say: %s", r.Scenario, f.Message, w)
				}
			}
		}
		if !found || !r.Inconclusive {
			t.Errorf("%s: inconclusive=%v, fault_not_triggered found=%v; want both", r.Scenario, r.Inconclusive, found)
		}
	}
	for sc := range want {
		t.Errorf("no scenario %s ran", sc)
	}
}
