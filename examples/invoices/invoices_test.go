package invoices

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func checked(t *testing.T, rep *runtime.Report) *runtime.Report {
	t.Helper()
	require.NoError(t, reportschema.Validate(rep))
	return rep
}

// errorsByCode lists the scenarios of each error finding code.
func errorsByCode(rep *runtime.Report) map[string][]string {
	out := map[string][]string{}
	for _, f := range rep.Findings {
		if f.Severity == runtime.SeverityError {
			out[f.Code] = append(out[f.Code], f.Scenario)
		}
	}
	return out
}

func first(t *testing.T, rep *runtime.Report, code string) runtime.Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Code == code {
			return f
		}
	}
	t.Fatalf("no %s finding; findings: %v", code, errorsByCode(rep))
	return runtime.Finding{}
}

func setup(b **Billing) testkit.Option {
	return testkit.Setup(func(context.Context) error { *b = NewBilling(); return nil })
}

func TestDependencyBugIsCaught(t *testing.T) {
	var b *Billing
	rep := checked(t, testkit.Run(t, func(ctx context.Context) error {
		return (&DependencyAgent{Billing: b}).Run(ctx)
	}, setup(&b), testkit.Invariant("no attachment before its invoice", func(*runtime.Trace) error {
		if d := b.Dangling(); len(d) > 0 {
			return fmt.Errorf("dangling attachments: %v", d)
		}
		return nil
	})))
	f := first(t, rep, runtime.CodeDependentCallsConcurrent)
	assert.Equal(t, []string{"createInvoice", "attachInvoice"}, f.Ops)
	assert.Contains(t, f.Message, "attachInvoice dispatched concurrently with its prerequisite createInvoice")
	// Found on the first schedule, the listed one: every call started
	// before any finished.
	assert.Equal(t, "interleaving/s0s1f0f1", f.Scenario)
	assert.Contains(t, f.Replay, "AGENTIDEM_SCHEDULE='s0s1f0f1'")
	// Where attach ran first, the world shows it too.
	assert.Contains(t, errorsByCode(rep), runtime.CodeInvariantFailed)
	// Not also reported as two writes to one entity: the after= pair says it.
	assert.NotContains(t, errorsByCode(rep), runtime.CodeConcurrentWritesEntity)
}

// With an API that refuses to attach to an unknown invoice, the agent
// fails in the orders where attach runs first. The baseline runs under the
// listed schedule, so that is the same on every run, and the failure is
// reported as what it is: the dependent call dispatched with its
// prerequisite (with the failing order and attach's own error), not a
// broken baseline. The reverse order passes and is the baseline the faults
// are planned from.
func TestStrictDependencyBugIsAnOrderFindingNotABrokenBaseline(t *testing.T) {
	rep := strictDependency(t)
	require.True(t, rep.BaselineSucceeded, "the reverse order is the baseline")
	codes := errorsByCode(rep)
	assert.NotContains(t, codes, runtime.CodeBaselineFailed)
	f := first(t, rep, runtime.CodeDependentCallsConcurrent)
	assert.Equal(t, runtime.ScenarioBaseline, f.Scenario)
	assert.Contains(t, f.Message, "attachInvoice failed: attach ORD-9 to INV-1: no such invoice")
	// The baseline's finding: its line reruns the baseline, which fails in
	// the listed order again, and names that order beside it.
	assert.Contains(t, f.Replay, "/^baseline$'")
	assert.Contains(t, f.Replay, "AGENTIDEM_SCHEDULE='s0s1f0f1'")
	assert.NotEmpty(t, rep.Results, "the fault scenarios ran from the passing order")
}

func strictDependency(t testkit.TB) *runtime.Report {
	var b *Billing
	return testkit.Run(t, func(ctx context.Context) error {
		return (&DependencyAgent{Billing: b}).Run(ctx)
	}, testkit.Setup(func(context.Context) error { b = NewBilling(); b.Strict = true; return nil }), testkit.NoSummary())
}

// TestDependencyVerdictIsTheSameEveryRun runs the strict dependency bug's
// whole suite repeatedly and counts the distinct finding sets: it must be
// one. AGENTIDEM_RUNS sets the count (scripts/bench/determinism.sh runs
// 100).
func TestDependencyVerdictIsTheSameEveryRun(t *testing.T) {
	runs := 5
	if v := os.Getenv("AGENTIDEM_RUNS"); v != "" {
		_, _ = fmt.Sscan(v, &runs)
	}
	sets := map[string]int{}
	for i := 0; i < runs; i++ {
		rep := strictDependency(silent{t})
		var keys []string
		for _, f := range rep.Findings {
			keys = append(keys, f.Code+" "+f.Scenario+" "+strings.Join(f.Ops, ","))
		}
		sort.Strings(keys)
		sets[strings.Join(keys, "\n")]++
	}
	t.Logf("invoices strict dependency bug: %d runs, %d distinct finding sets", runs, len(sets))
	assert.Len(t, sets, 1, "%v", sets)
}

// silent is a TB without subtests or logs, for repeated suites.
type silent struct{ t *testing.T }

func (s silent) Helper()               {}
func (s silent) Name() string          { return s.t.Name() }
func (s silent) Errorf(string, ...any) {}
func (s silent) Logf(string, ...any)   {}

func TestDependencyFixedPasses(t *testing.T) {
	var b *Billing
	rep := checked(t, testkit.TestAgent(t, func(ctx context.Context) error {
		return (&DependencyAgent{Billing: b, Fixed: true}).Run(ctx)
	}, setup(&b)))
	assert.True(t, rep.Safe)
}

// seats runs the seats agent and keeps the last total it quoted.
func seats(b **Billing, fixed bool, quoted *atomic.Int64) func(context.Context) error {
	return func(ctx context.Context) error {
		total, err := (&SeatsAgent{Billing: *b, Fixed: fixed}).Run(ctx)
		quoted.Store(int64(total))
		return err
	}
}

// seatsOutcome is the agent's answer and the world's end state.
func seatsOutcome(b **Billing, quoted *atomic.Int64) testkit.Option {
	return testkit.Outcome(func() any {
		total, _ := (*b).MonthlyTotal(context.Background(), "sub-1")
		return map[string]int{"quoted": int(quoted.Load()), "actual": total}
	})
}

func TestReadAfterWriteIsCaught(t *testing.T) {
	var b *Billing
	var quoted atomic.Int64
	rep := checked(t, testkit.Run(t, seats(&b, false, &quoted), setup(&b), seatsOutcome(&b, &quoted)))
	f := first(t, rep, runtime.CodeOrderVariantOutcome)
	// 6 orders of the two gates of two calls on one entity; the quote is
	// stale (300) in the 3 where the read starts first... or fresh (360).
	assert.Contains(t, f.Message, "of 6 schedules end differently from the listed one")
	assert.Contains(t, f.Message, `{"actual":360,"quoted":300}`)
	assert.Contains(t, f.Message, `{"actual":360,"quoted":360}`)
	assert.Equal(t, 2, strings.Count(f.Message, "AGENTIDEM_SCHEDULE="), "two replay lines that disagree")
}

func TestReadAfterWriteFixedPasses(t *testing.T) {
	var b *Billing
	var quoted atomic.Int64
	rep := checked(t, testkit.TestAgent(t, seats(&b, true, &quoted), setup(&b), seatsOutcome(&b, &quoted)))
	assert.True(t, rep.Safe)
	assert.EqualValues(t, 360, quoted.Load())
}

func TestMutualExclusionIsCaught(t *testing.T) {
	var b *Billing
	rep := checked(t, testkit.Run(t, func(ctx context.Context) error {
		return (&AdjustAgent{Billing: b}).Run(ctx)
	}, setup(&b)))
	f := first(t, rep, runtime.CodeConcurrentWritesEntity)
	assert.ElementsMatch(t, []string{"applyCredit", "applyDiscount"}, f.Ops)
	assert.Equal(t, []string{`"INV-1"`}, f.Identities)
	// In every schedule that starts both before either finishes (four of
	// six), one problem: kept at the first schedule only, the other three
	// read safe, and their replay lines passed (red team rtV #14).
	assert.ElementsMatch(t, []string{"interleaving/s0s1f0f1", "interleaving/s0s1f1f0", "interleaving/s1s0f0f1", "interleaving/s1s0f1f0"},
		errorsByCode(rep)[runtime.CodeConcurrentWritesEntity], "each schedule with both writes in flight")
	n := 0
	for _, p := range rep.Problems {
		if p.Code == runtime.CodeConcurrentWritesEntity {
			n++
			assert.Len(t, p.SeenIn, 4, "one problem, in the four schedules")
		}
	}
	assert.Equal(t, 1, n, "reported as one problem")
}

func TestMutualExclusionFixedPasses(t *testing.T) {
	var b *Billing
	rep := checked(t, testkit.TestAgent(t, func(ctx context.Context) error {
		return (&AdjustAgent{Billing: b, Fixed: true}).Run(ctx)
	}, setup(&b)))
	assert.True(t, rep.Safe)
}

func linesInvariant(b **Billing) testkit.Option {
	return testkit.Invariant("each line once", func(*runtime.Trace) error {
		for k, n := range (*b).Lines() {
			if n > 1 {
				return fmt.Errorf("line %s added %d times", k, n)
			}
		}
		return nil
	})
}

func TestPartialBatchReplayIsCaught(t *testing.T) {
	var b *Billing
	rep := checked(t, testkit.Run(t, func(ctx context.Context) error {
		return (&LinesAgent{Billing: b}).Run(ctx)
	}, setup(&b), linesInvariant(&b)))
	got := errorsByCode(rep)
	// One partial failure per call of the batch; each makes the agent
	// replay the three calls that had succeeded.
	assert.ElementsMatch(t, []string{
		"partial_batch_failure/addLineItem#1", "partial_batch_failure/addLineItem#2",
		"partial_batch_failure/addLineItem#3", "partial_batch_failure/notifyAccounting#1",
	}, got[runtime.CodePartialBatchReplay])
	f := first(t, rep, runtime.CodePartialBatchReplay)
	assert.Contains(t, f.Message, "executed again 3 call(s) of the same batch that had already succeeded")
	// The replays are that finding, not also generic duplicates.
	for _, s := range got[runtime.CodeDuplicateWrite] {
		assert.False(t, strings.HasPrefix(s, "partial_batch_failure/"), s)
	}
}

// Retrying only the failed call fixes partial batches (every
// partial_batch_failure scenario and the schedule pass), but not the agent:
// its line items carry no key, so a retry after a lost acknowledgement, a
// crash and redelivery, or a duplicate delivery bills a line again. Those
// 10 unsafe scenarios are true findings (the world shows each line added
// twice); TestKeyedLinesAgentPasses is the fixed agent.
func TestRetryingOnlyTheFailedCallFixesPartialBatchesButNotDuplicateLines(t *testing.T) {
	var b *Billing
	rep := checked(t, testkit.Run(t, func(ctx context.Context) error {
		return (&LinesAgent{Billing: b, RetryFailed: true}).Run(ctx)
	}, setup(&b), linesInvariant(&b)))
	n := 0
	for _, r := range rep.Results {
		if r.Kind == runtime.ScenarioPartialBatch || r.Kind == runtime.ScenarioInterleaving {
			n++
			assert.True(t, r.Safe, "%s: %v", r.Scenario, r.Findings)
		}
	}
	assert.Equal(t, 6, n, "4 partial batch failures and 2 schedules: the 4 calls commute, and their answers come back in the listed order and the other way round")
	// Line items are not idempotent: a redelivered invocation bills them
	// again. That is true, and the keyed agent below fixes it.
	assert.Contains(t, errorsByCode(rep)[runtime.CodeDuplicateWrite], "duplicate_delivery/sequential")
}

func TestKeyedLinesAgentPasses(t *testing.T) {
	var b *Billing
	rep := checked(t, testkit.TestAgent(t, func(ctx context.Context) error {
		return (&LinesAgent{Billing: b, RetryFailed: true, Keyed: true}).Run(ctx)
	}, setup(&b), linesInvariant(&b), testkit.ExactlyOnce()))
	assert.True(t, rep.Safe)
	n := 0
	for _, r := range rep.Results {
		if r.Kind == runtime.ScenarioPartialBatch {
			n++
			assert.True(t, r.FaultFired, r.Scenario)
		}
	}
	assert.Equal(t, 4, n)
}

func TestPrintedScheduleReplaysTheBug(t *testing.T) {
	var b *Billing
	agent := func(ctx context.Context) error { return (&AdjustAgent{Billing: b}).Run(ctx) }
	rep := testkit.Run(t, agent, setup(&b), testkit.NoSummary())
	f := first(t, rep, runtime.CodeConcurrentWritesEntity)
	schedule := strings.TrimPrefix(f.Scenario, "interleaving/")
	require.Contains(t, f.Replay, "AGENTIDEM_SCHEDULE='"+schedule+"'")

	// Feed the printed schedule back: exactly that one runs, with the bug.
	rep = checked(t, testkit.Run(t, agent, setup(&b), testkit.Replay(schedule), testkit.NoSummary()))
	var runs []string
	for _, r := range rep.Results {
		if r.Kind == runtime.ScenarioInterleaving {
			runs = append(runs, r.Schedule)
		}
	}
	assert.Equal(t, []string{schedule}, runs)
	assert.Equal(t, f.Message, first(t, rep, runtime.CodeConcurrentWritesEntity).Message)
}

// Two deliveries of an agent that sends createInvoice and attachInvoice in
// one turn race the same way on every run: duplicate_delivery/concurrent
// runs under the listed schedule. Under the lockstep, which let each
// delivery's ready calls go at once, the four calls ran in the order the Go
// scheduler chose: the double dangling attachment and the duplicate
// createInvoice were reported in 25 of 30 runs, and nothing in the others.
func TestConcurrentDeliveryOfParallelCallsIsTheSameEveryRun(t *testing.T) {
	runs := 20
	if v := os.Getenv("AGENTIDEM_RUNS"); v != "" {
		_, _ = fmt.Sscan(v, &runs)
	}
	seen := map[string]int{}
	for range runs {
		var b *Billing
		rep := testkit.Run(silent{t}, func(ctx context.Context) error {
			return (&DependencyAgent{Billing: b}).Run(ctx)
		}, setup(&b), testkit.NoSummary(), testkit.Invariant("no attachment before its invoice", func(*runtime.Trace) error {
			if d := b.Dangling(); len(d) > 0 {
				return fmt.Errorf("dangling attachments: %v", d)
			}
			return nil
		}))
		var res *runtime.Result
		for _, r := range rep.Results {
			if r.Scenario == runtime.ScenarioDuplicateConcurrent {
				res = r
			}
		}
		require.NotNil(t, res)
		var line []string
		for _, f := range res.Findings {
			line = append(line, f.Code)
		}
		sort.Strings(line)
		for _, o := range res.Trace.Ops {
			line = append(line, o.ID)
		}
		seen[strings.Join(line, " ")]++
	}
	assert.Len(t, seen, 1, "duplicate_delivery/concurrent over %d runs: %v", runs, seen)
	for k := range seen {
		assert.True(t, strings.HasPrefix(k, runtime.CodeDuplicateWrite+" "+runtime.CodeInvariantFailed+" "), "want the duplicate and the dangling attachment: %s", k)
	}
}
