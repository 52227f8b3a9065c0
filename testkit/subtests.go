package testkit

import (
	"flag"
	"fmt"
	"github.com/agentidem/agentidem-go/internal/bubble"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// A subtest per scenario is what go test -v lists and what a replay line's
// -run pattern selects, but under plain go test a passing subtest prints
// nothing: its log lines are dropped with it. Creating it costs a goroutine,
// two hand-offs and the name matching of go test, a large share of a short
// scenario, and on a machine with more than one processor each hand-off
// wakes an idle one. So when nothing can show a passing subtest, scenarios
// run in the test's own goroutine, what a subtest would have printed goes to
// a recorder, and only a scenario whose report fails the test gets its
// subtest, made after the run under the name it would have had, where the
// report is printed again as it was recorded. A scenario that fails only
// with problems an earlier subtest printed in full gets none either: it
// would print one line that points back (reportResult), and the summary
// names it.
//
// Subtests are made for every scenario, as before, when any of these can
// show a passing one or needs it: -test.v (and go test -json), a -run or
// -skip pattern with more than one level (a replay line), -failfast,
// VirtualTime (the bubble runs in the scenario's subtest), and a TB that
// is not a *testing.T.

// eagerSubtests reports whether every scenario gets its subtest before it
// runs, as opposed to only the failing ones, after.
func eagerSubtests(t TB, virtual bool) bool {
	if _, ok := t.(*testing.T); !ok || virtual || verbose() {
		return true
	}
	return selectsSubtests() || failFast()
}

// selectsSubtests reports whether -run or -skip names subtests (a pattern
// with a "/"): the user's choice of scenarios, as a replay line makes.
func selectsSubtests() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && strings.Contains(f.Value.String(), "/") {
			return true
		}
	}
	return false
}

// failFast reports whether go test runs with -failfast.
func failFast() bool {
	f := flag.Lookup("test.failfast")
	return f != nil && f.Value.String() == "true"
}

// deferred is the report of scenarios that ran without subtests: the
// subtest it would have been (a scenario, or a group of them with a
// subtest each), and whether it fails the test.
type deferred struct {
	name     string // as noteSubtest returned it
	failed   bool
	subtests int // the subtests report makes of its own
	report   func(TB)
}

// record writes report, which may make subtests of its own, to a recorder
// and returns what it did.
func record(name string, report func(TB)) deferred {
	r := &recorder{}
	report(r)
	return deferred{name: name, failed: r.failed, subtests: r.subtests, report: report}
}

// flush makes the subtest of a failing report under parent, and writes the
// report again in it; a passing report printed nothing and is done. Each
// subtest is a goroutine go test starts and waits for, after the suite
// ran: said so, the runtime's census of goroutines does not take them for
// someone else's, and the next suite's baseline need not dump the stacks
// of the process again (runtime.HarnessGoroutines).
func (d deferred) flush(parent TB) {
	if !d.failed {
		return
	}
	if _, ok := parent.(*testing.T); !ok || bubble.In() { // no subtest goroutine (runSubtest)
		runSubtest(parent, d.name, d.report)
		return
	}
	runtime.HarnessGoroutines(1+d.subtests, func() { runSubtest(parent, d.name, d.report) })
}

// recorder is the TB of reports written without a subtest: subtests under
// it run inline (it has no Run method), and only whether an error was
// reported is kept, as a passing subtest prints nothing under plain go
// test. subtests counts the subtests the report made under it.
type recorder struct {
	failed   bool
	subtests int
}

func (r *recorder) Helper()               {}
func (r *recorder) Name() string          { return "" }
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Logf(string, ...any)   {}

// logSummary logs the suite's summary. Under plain go test the log of a
// passing test is not printed, and rendering the summary costs as much as
// a tenth of a short suite: while t has not failed, the summary waits, and
// it is logged once t fails (by a later suite of the test, or by the end
// of the test, after an assertion that followed the suite), after those of
// the test's earlier suites. With eager subtests (go test -v) it is logged
// at once, as it is printed. printed is what the suite's subtests printed
// (reportResult), for the summary to say where.
func logSummary(t TB, rep *runtime.Report, eager bool, printed map[string]string) {
	if !plainLines(t) {
		t.Helper()
	}
	c, ok := t.(interface {
		Cleanup(func())
		Failed() bool
	})
	if eager || !ok || !reflect.TypeOf(t).Comparable() {
		if eager {
			printed = nil // every scenario had its subtest
		}
		logSummaryLine(t, summaryLine(rep, !eager, printed))
		return
	}
	if c.Failed() {
		// Logged now, after any an earlier suite left waiting, with
		// nothing to wait for the end of the test (t.Cleanup, another
		// walk of the stack).
		if v, ok := waitingSummaries.Load(t); ok {
			v.(*summaries).log(t)
		}
		logSummaryLine(t, summaryLine(rep, true, printed))
		return
	}
	v, loaded := waitingSummaries.LoadOrStore(t, &summaries{})
	w := v.(*summaries)
	if !loaded {
		c.Cleanup(func() {
			waitingSummaries.Delete(t)
			if c.Failed() {
				w.log(t)
			}
		})
	}
	w.mu.Lock()
	w.reps = append(w.reps, waiting{rep, printed})
	w.mu.Unlock()
	if c.Failed() {
		w.log(t)
	}
}

// waitingSummaries holds, per test, the summaries not logged yet.
var waitingSummaries sync.Map // TB → *summaries

type summaries struct {
	mu   sync.Mutex
	reps []waiting
}

// waiting is a suite's summary not logged yet: its report, and what its
// subtests printed.
type waiting struct {
	rep     *runtime.Report
	printed map[string]string
}

// log logs the waiting summaries in the order of their suites.
func (w *summaries) log(t TB) {
	if !plainLines(t) {
		t.Helper()
	}
	w.mu.Lock()
	reps := w.reps
	w.reps = nil
	w.mu.Unlock()
	for _, w := range reps {
		logSummaryLine(t, summaryLine(w.rep, true, w.printed))
	}
}

// deselectedNote is the note of a scenario -run or -skip left out.
const deselectedNote = "-run (or -skip) did not select its subtest, so it did not run and the suite has no verdict on it"

// deselectedSummary says how many of the suite's scenarios -run left out.
func deselectedSummary(deselected, total int, test string) string {
	if deselected >= total {
		return fmt.Sprintf("-run selected none of the suite's %d scenarios (beyond the baseline), so the verdict is the baseline's alone and the suite is inconclusive; a scenario's subtest is named kind/op#n (lost_acknowledgement/refund#1, crash_restart/refund#1, duplicate_delivery/sequential): -run '%s/.*/refund' selects every scenario of refund", total, test)
	}
	return fmt.Sprintf("-run selected %d of the suite's %d scenarios (beyond the baseline); the %d others did not run and are counted inconclusive (not run), so the verdict is not the whole suite's: run go test without a subtest pattern for it", total-deselected, total, deselected)
}
