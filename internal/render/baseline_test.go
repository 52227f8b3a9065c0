package render

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/runtime"
)

// An agent that refunds twice without any fault: the baseline ran (the
// agent returned no error) but is already unsafe. The header of the text,
// the HTML headline, the HTML baseline tile and the baseline's row must all
// say so.
func TestBaselineWordAgreesWithItsRow(t *testing.T) {
	rep := refundReport(t, "TestTwiceAgent", func(ctx context.Context, b *refund.Bank) error {
		for range 2 {
			if _, err := b.RefundTraced(ctx, paymentID); err != nil {
				return err
			}
		}
		return nil
	})
	if !rep.BaselineSucceeded || scenarioStatus(rep.Baseline, true) != statusUnsafe {
		t.Fatalf("fixture: baseline succeeded %v, status %s; want a baseline that ran and is unsafe", rep.BaselineSucceeded, scenarioStatus(rep.Baseline, true))
	}
	if got := baselineWord(rep); got != "unsafe" {
		t.Errorf("baselineWord = %q, want unsafe", got)
	}
	text := Text(rep)
	header, _, _ := strings.Cut(text, "\n")
	if !strings.Contains(header, "baseline unsafe") || strings.Contains(header, "baseline ok") {
		t.Errorf("header %q does not say the baseline is unsafe", header)
	}
	// The counts after the baseline's word are of the other scenarios:
	// "0 unsafe" alone, after "baseline unsafe", read as a contradiction.
	if len(rep.Results) == 0 {
		t.Fatalf("fixture: no scenario after the baseline")
	}
	if want := fmt.Sprintf(", %d of %d unsafe, ", rep.UnsafeCount, len(rep.Results)); !strings.Contains(header, want) {
		t.Errorf("header %q does not say %q", header, want)
	}
	if !strings.Contains(text, "UNSAFE       baseline") {
		t.Errorf("baseline row not UNSAFE:\n%s", text)
	}

	checkBaselineTile(t, renderHTML(t, rep), "unsafe", "bad")

	// A fixed agent's baseline is ok everywhere.
	ok := keyedReport(t)
	if got := baselineWord(ok); got != "ok" {
		t.Errorf("keyed agent: baselineWord = %q, want ok", got)
	}
}

// checkBaselineTile checks that the page's baseline tile says word, with
// class (bad: red, warn: amber).
func checkBaselineTile(t *testing.T, page []byte, word, class string) {
	t.Helper()
	found := false
	for _, tile := range find(parseHTML(t, page), "div", "stat") {
		if strings.HasPrefix(textOf(tile), "baseline") {
			found = true
			if !strings.Contains(textOf(tile), word) || !hasClass(tile, class) {
				t.Errorf("baseline tile %q (class %s: %v), want %s", textOf(tile), class, hasClass(tile, class), word)
			}
		}
	}
	if !found {
		t.Error("no baseline tile")
	}
}

// A baseline cut short by a stall that was slow, not stuck (a retry's
// back-off past StallTimeout: a warning, the scenario inconclusive) did
// not fail: the header, the baseline's row, its tile and the verdict say
// INCONCLUSIVE. Before, the header read "BASELINE FAILED — baseline
// failed" beside the warning's "inconclusive, not failed" and go test's
// PASS (red team rZ #4). A baseline whose stall is an error still failed.
func TestABaselineCutShortBySlowStallIsInconclusive(t *testing.T) {
	stalled := func(sev runtime.Severity, msg string) *runtime.Report {
		base := &runtime.Result{Scenario: "baseline", Failed: true, Inconclusive: true,
			Error: "context canceled", Trace: &runtime.Trace{ID: "baseline"},
			Findings: []runtime.Finding{{Code: runtime.CodeStalled, Severity: sev, Scenario: "baseline", Message: msg}}}
		if sev == runtime.SeverityError {
			base.Inconclusive = false
		}
		return &runtime.Report{SchemaVersion: runtime.SchemaVersion, Name: "TestSlowRetry", Safe: sev != runtime.SeverityError,
			BaselineFailure: "context canceled", Baseline: base, Results: []*runtime.Result{}, Findings: base.Findings}
	}
	slow := stalled(runtime.SeverityWarning, "scenario stalled: no progress for 10s: goroutine 7 was not stuck but asleep for 10s in a retry back-off; the scenario was slow, not stuck, and nothing unsafe was seen, so it is inconclusive, not failed")
	if got := Verdict(slow); got != VerdictInconclusive {
		t.Errorf("Verdict = %q, want %q", got, VerdictInconclusive)
	}
	if got := baselineWord(slow); got != "inconclusive" {
		t.Errorf("baselineWord = %q, want inconclusive", got)
	}
	header, _, _ := strings.Cut(Text(slow), "\n")
	if !strings.Contains(header, "INCONCLUSIVE — baseline inconclusive") || strings.Contains(header, "FAILED") {
		t.Errorf("header %q does not say the baseline is inconclusive", header)
	}
	checkBaselineTile(t, renderHTML(t, slow), "inconclusive", "warn")

	stuck := stalled(runtime.SeverityError, "scenario stalled: no progress for 10s: delivery 1 is blocked on a channel receive")
	if got := Verdict(stuck); got != VerdictBaselineFailed {
		t.Errorf("stuck: Verdict = %q, want %q", got, VerdictBaselineFailed)
	}
	if got := baselineWord(stuck); got != "failed" {
		t.Errorf("stuck: baselineWord = %q, want failed", got)
	}
}
