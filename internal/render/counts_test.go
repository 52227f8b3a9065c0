package render

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/runtime"
)

// The HTML page counts as the text summary does: its headline and its
// unsafe and inconclusive tiles say the numbers of the summary's "U of N
// unsafe, I inconclusive", which leave the baseline out. Before, the
// headline counted the baseline among the scenarios: "4 of 7 scenarios
// unsafe" on the page, "4 of 6 unsafe" on the console, and "54 of 60"
// beside an unsafe tile of 53 where the baseline was unsafe too (red team
// rtO, item 10).
func TestHTMLCountsAsTheTextSummaryDoes(t *testing.T) {
	twice := refundReport(t, "TestTwiceAgent", func(ctx context.Context, b *refund.Bank) error {
		for range 2 {
			if _, err := b.RefundTraced(ctx, paymentID); err != nil {
				return err
			}
		}
		return nil
	})
	inconclusive := keyedReport(t)
	inconclusive.Results[0].Inconclusive = true
	inconclusive.InconclusiveCount = 1
	counts := regexp.MustCompile(`, (\d+) of (\d+) unsafe, (\d+) inconclusive, `)
	for _, c := range []struct {
		name     string
		rep      *runtime.Report
		headline string // with U, N and I from the text summary
	}{
		{"baseline ok, unsafe", naiveReport(t), "%[1]d of %[2]d scenarios after the baseline unsafe"},
		{"baseline unsafe", twice, "the baseline unsafe, and %[1]d of the %[2]d scenarios after it: the bug shows without any fault"},
		{"safe", keyedReport(t), "the baseline and all %[2]d scenarios after it safe"},
		{"inconclusive", inconclusive, "no unsafe scenario, but %[3]d of %[2]d scenarios after the baseline inconclusive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			header, _, _ := strings.Cut(Text(c.rep), "\n")
			m := counts.FindStringSubmatch(header)
			if m == nil {
				t.Fatalf("text header %q has no counts", header)
			}
			u, n, i := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3])
			if c.name != "safe" && c.name != "inconclusive" && u == 0 {
				t.Fatalf("fixture: %q counts no unsafe scenario", header)
			}
			page := parseHTML(t, renderHTML(t, c.rep))
			var got []string
			for _, h := range find(page, "p", "headline") {
				got = append(got, textOf(h))
			}
			if want := fmt.Sprintf(c.headline, u, n, i); len(got) != 1 || got[0] != want {
				t.Errorf("headline %q, want %q (text summary: %q)", got, want, header)
			}
			tiles := map[string]string{}
			for _, tile := range find(page, "div", "stat") {
				dt, dd := find(tile, "dt"), find(tile, "dd")
				if len(dt) == 1 && len(dd) == 1 {
					tiles[textOf(dt[0])] = textOf(dd[0])
				}
			}
			if tiles["unsafe"] != m[1] || tiles["inconclusive"] != m[3] {
				t.Errorf("tiles unsafe %q, inconclusive %q; the text summary says %s and %s", tiles["unsafe"], tiles["inconclusive"], m[1], m[3])
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The page names a call as its findings and its schedule's legend do,
// op#k (2:op#k in a second delivery), and in a schedule's scenario puts
// the call's number in the legend in front of it. Before, rows were
// numbered in start order: "#0 create_invoice" beside a legend whose s0
// was attach_invoice, and "#1 set_note", "#3 set_note" beside findings
// naming set_note#1 and set_note#2 (red team rtO, item 10).
func TestHTMLNamesCallsAsTheLegendDoes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	op := func(seq, inv, occ int, name string) runtime.Operation {
		id := fmt.Sprintf("%d:%s#%d", inv, name, occ)
		return runtime.Operation{ID: id, Name: name, Kind: runtime.KindWrite, Seq: seq, Invocation: inv, Occurrence: occ, Batch: 1,
			Status: runtime.StatusSuccess, Observation: runtime.ObservationReceived, StartedAt: t0, CompletedAt: t0}
	}
	// The calls started in this order; the legend numbers them otherwise.
	ops := []runtime.Operation{op(0, 1, 1, "create_invoice"), op(1, 1, 1, "set_note"), op(2, 1, 1, "attach_invoice"), op(3, 1, 2, "set_note"), op(4, 2, 3, "set_note")}
	legend := "s0 = attach_invoice#1, s1 = create_invoice#1, s2 = set_note#1, s3 = set_note#2; round 2: s0 = 2:set_note#3"
	res := &runtime.Result{Scenario: "interleaving/s0s2s1s3f0f2f1f3.s0f0", Kind: runtime.ScenarioInterleaving, OperationIndex: -1, Safe: true,
		Schedule: "s0s2s1s3f0f2f1f3.s0f0", Legend: legend, Trace: &runtime.Trace{Ops: ops, Invocations: 2}}
	rep := &runtime.Report{SchemaVersion: runtime.SchemaVersion, Name: "TestPar", Safe: true, BaselineSucceeded: true,
		Baseline: &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true, Trace: &runtime.Trace{Ops: ops[:4], Invocations: 1}},
		Results:  []*runtime.Result{res}}
	doc := parseHTML(t, renderHTML(t, rep))
	labels := map[string][]string{}
	for _, sec := range find(doc, "details", "scenario") {
		name, _ := attr(sec, "data-scenario")
		for _, row := range find(sec, "details", "call") {
			for _, l := range find(row, "span", "label") {
				labels[name] = append(labels[name], strings.Join(strings.Fields(textOf(l)), " "))
			}
		}
	}
	// Rows stay in start order, per delivery.
	want := map[string][]string{
		"baseline": {"create_invoice#1 write", "set_note#1 write", "attach_invoice#1 write", "set_note#2 write"},
		res.Scenario: {"s1 create_invoice#1 write", "s2 set_note#1 write", "s0 attach_invoice#1 write", "s3 set_note#2 write",
			"round 2: s0 2:set_note#3 write"},
	}
	for name, w := range want {
		if got := labels[name]; strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("%s: rows %q, want %q", name, got, w)
		}
	}
	if page := string(renderHTML(t, rep)); strings.Contains(page, `class="seq">#`) || strings.Contains(page, "call #") {
		t.Error("the page still numbers calls with #N in start order")
	}
}
