package invoices

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// TestMeasureSchedules measures the scheduler for scripts/bench/schedules.sh.
// It lives in a test, not a Benchmark, because testing/synctest bubbles need
// a *testing.T; it asserts nothing about time and is skipped unless
// AGENTIDEM_MEASURE=1. Each line it logs starts with "measure:".
func TestMeasureSchedules(t *testing.T) {
	if os.Getenv("AGENTIDEM_MEASURE") == "" {
		t.Skip("set AGENTIDEM_MEASURE=1 (scripts/bench/schedules.sh does) to measure the scheduler")
	}
	// A batch of four dependent calls: four adjustments to one invoice.
	var b *Billing
	four := func(ctx context.Context) error {
		var calls []func() error
		for i := 0; i < 4; i++ {
			calls = append(calls, func() error { return b.ApplyCreditTraced(ctx, "INV-1", i+1) })
		}
		return errors.Join(parallel(calls...)...)
	}
	for _, run := range []struct {
		name string
		opts []testkit.Option
	}{
		{"4 dependent calls, exhaustive, real", nil},
		{"4 dependent calls, exhaustive, virtual", []testkit.Option{testkit.VirtualTime()}},
		{"4 dependent calls, PCT budget 100, real", []testkit.Option{testkit.Schedules(100)}},
	} {
		// Wall time of the whole suite (fault scenarios included: they
		// are 18 runs next to thousands of schedules). Durations inside a
		// bubble are virtual, so the wall clock is read out here.
		start := time.Now()
		rep := testkit.Run(t, four, append(run.opts, setup(&b), testkit.NoSummary())...)
		wall := time.Since(start)
		n := 0
		for _, r := range rep.Results {
			if r.Kind == runtime.ScenarioInterleaving {
				n++
			}
		}
		t.Logf("measure: explore|%s|%d|%.3f|%.0f", run.name, n, wall.Seconds(), float64(n)/wall.Seconds())
	}

	// Seeded order bugs: how many schedules until the finding shows.
	for _, bug := range []struct {
		name string
		code string
		fn   func(b **Billing) (func(context.Context) error, []testkit.Option)
	}{
		{"attachInvoice with createInvoice (after=)", runtime.CodeDependentCallsConcurrent, func(b **Billing) (func(context.Context) error, []testkit.Option) {
			return func(ctx context.Context) error { return (&DependencyAgent{Billing: *b}).Run(ctx) }, nil
		}},
		{"discount and credit on one invoice", runtime.CodeConcurrentWritesEntity, func(b **Billing) (func(context.Context) error, []testkit.Option) {
			return func(ctx context.Context) error { return (&AdjustAgent{Billing: *b}).Run(ctx) }, nil
		}},
		{"seat count and quoted total", runtime.CodeOrderVariantOutcome, func(b **Billing) (func(context.Context) error, []testkit.Option) {
			var quoted int
			return func(ctx context.Context) error {
					total, err := (&SeatsAgent{Billing: *b}).Run(ctx)
					quoted = total
					return err
				}, []testkit.Option{testkit.Outcome(func() any {
					total, _ := (*b).MonthlyTotal(context.Background(), "sub-1")
					return []int{quoted, total}
				})}
		}},
		{"finish-order race over 3 quotes", runtime.CodeOrderVariantOutcome, firstQuoteBug},
	} {
		var b *Billing
		fn, opts := bug.fn(&b)
		rep := testkit.Run(t, fn, append(opts, setup(&b), testkit.NoSummary())...)
		var order []string
		found := -1
		for _, r := range rep.Results {
			if r.Kind != runtime.ScenarioInterleaving {
				continue
			}
			order = append(order, r.Schedule)
			for _, f := range r.Findings {
				if f.Code == bug.code && found < 0 {
					found = len(order)
				}
			}
		}
		// The story's harness runs the listed order, its reverse and
		// lexicographic permutations of the calls (each started and
		// finished in that order): 6 schedules.
		heuristic := heuristicFinds(rep, bug.code)
		t.Logf("measure: bug|%s|%s|%d|%d|%s", bug.name, bug.code, found, len(order), heuristic)
	}
}

// firstQuoteBug asks three providers for a quote in parallel and books the
// first answer, assuming provider "a" always answers first: the booking
// depends on the order the answers arrive in, not on when calls started.
func firstQuoteBug(b **Billing) (func(context.Context) error, []testkit.Option) {
	var booked string
	fn := func(ctx context.Context) error {
		ch := make(chan string, 3)
		var calls []func() error
		for _, p := range []string{"a", "b", "c"} {
			calls = append(calls, func() error {
				_, err := (*b).QuoteTraced(ctx, p)
				ch <- p
				return err
			})
		}
		err := errors.Join(parallel(calls...)...)
		booked = <-ch
		return err
	}
	return fn, []testkit.Option{testkit.Outcome(func() any { return booked })}
}

// heuristicFinds says whether the 6-schedule heuristic (listed, reversed,
// lexicographic permutations with starts and finishes in one order) would
// have run a schedule with the finding.
func heuristicFinds(rep *runtime.Report, code string) string {
	var bad []string
	outcomes := map[string]string{}
	for _, r := range rep.Results {
		if r.Kind != runtime.ScenarioInterleaving {
			continue
		}
		outcomes[r.Schedule] = r.Outcome
		for _, f := range r.Findings {
			if f.Code == code {
				bad = append(bad, r.Schedule)
			}
		}
	}
	if len(bad) == 0 {
		return "n/a"
	}
	h := heuristicSchedules(bad[0])
	if code == runtime.CodeOrderVariantOutcome {
		// The finding is a disagreement: does the heuristic's set contain
		// two schedules with different outcomes?
		seen := map[string]bool{}
		for _, s := range h {
			if o, ok := outcomes[s]; ok {
				seen[o] = true
			}
		}
		return fmt.Sprint(len(seen) > 1)
	}
	for _, s := range h {
		for _, x := range bad {
			if s == x {
				return "true"
			}
		}
	}
	return "false"
}

// heuristicSchedules lists, for a one-round schedule like s0s1s2f0f1f2,
// the 6 schedules of the heuristic.
func heuristicSchedules(example string) []string {
	n := strings.Count(example, "s")
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	as := func(p []int) string {
		var b strings.Builder
		for _, i := range p {
			fmt.Fprintf(&b, "s%d", i)
		}
		for _, i := range p {
			fmt.Fprintf(&b, "f%d", i)
		}
		return b.String()
	}
	rev := make([]int, n)
	for i := range perm {
		rev[i] = n - 1 - i
	}
	out := []string{as(perm), as(rev)}
	var all []string
	var rec func(k int, used []bool, cur []int)
	rec = func(k int, used []bool, cur []int) {
		if k == n {
			all = append(all, as(cur))
			return
		}
		for i := 0; i < n; i++ {
			if !used[i] {
				used[i] = true
				rec(k+1, used, append(cur, i))
				used[i] = false
			}
		}
	}
	rec(0, make([]bool, n), nil)
	sort.Strings(all)
	for _, s := range all {
		if len(out) >= 6 {
			break
		}
		if s != out[0] && s != out[1] {
			out = append(out, s)
		}
	}
	return out
}
