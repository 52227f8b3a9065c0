package render

import (
	"context"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/examples/refund"
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
	if !strings.Contains(text, "UNSAFE       baseline") {
		t.Errorf("baseline row not UNSAFE:\n%s", text)
	}

	doc := parseHTML(t, renderHTML(t, rep))
	found := false
	for _, s := range find(doc, "div", "stat") {
		if strings.HasPrefix(textOf(s), "baseline") {
			found = true
			if !strings.Contains(textOf(s), "unsafe") || !hasClass(s, "bad") {
				t.Errorf("baseline tile %q (bad class %v), want unsafe in red", textOf(s), hasClass(s, "bad"))
			}
		}
	}
	if !found {
		t.Error("no baseline tile")
	}

	// A fixed agent's baseline is ok everywhere.
	ok := keyedReport(t)
	if got := baselineWord(ok); got != "ok" {
		t.Errorf("keyed agent: baselineWord = %q, want ok", got)
	}
}
