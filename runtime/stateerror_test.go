package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// readRows stands for a helper State calls, which panics on a nil world.
func readRows(rows map[string]int) int {
	return rows["o-1"] + len(rows) + *(*int)(nil)
}

// A State that panics in the baseline stops the suite with a *ConfigError
// (Run returns it, no scenario runs, the report is not safe), and the
// error names the frame that panicked, a helper State called, in one
// line: not the stack that the note and the HTML page showed whole.
func TestAStatePanicInTheBaselineIsAConfigError(t *testing.T) {
	op := &Op{Name: "pay", Kind: KindWrite, Params: []string{"order"}}
	var rows map[string]int
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error {
		return traced(ctx, op, []any{"o-1"}, []any{"o-1"}, func(context.Context) error { rows["o-1"]++; return nil })
	}, Setup(func(context.Context) error { rows = map[string]int{}; return nil }),
		State(func() any { return readRows(rows) }))
	var cerr *ConfigError
	if !errors.As(err, &cerr) || cerr.Setting != "State" {
		t.Fatalf("Run's error: %v; want a *ConfigError of State", err)
	}
	msg := err.Error()
	for _, w := range []string{`State("stateerror_test.go:`, "failed in the baseline: State panicked: runtime error: invalid memory address or nil pointer dereference (at stateerror_test.go:12 in runtime.readRows)"} {
		if !strings.Contains(msg, w) {
			t.Errorf("the error does not say %q: %s", w, msg)
		}
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, "goroutine ") {
		t.Errorf("the error holds a stack: %s", msg)
	}
	if rep.Safe || len(rep.Results) != 0 || !rep.Baseline.Inconclusive || rep.BaselineSucceeded {
		t.Errorf("safe %v, %d scenarios, baseline inconclusive %v, succeeded %v: want no scenario and no verdict of safety",
			rep.Safe, len(rep.Results), rep.Baseline.Inconclusive, rep.BaselineSucceeded)
	}
}
