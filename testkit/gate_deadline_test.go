package testkit_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

var (
	slowReportOp = &runtime.Op{Name: "build_report", Kind: runtime.KindWrite, Params: []string{"id"}}
	quickPingOp  = &runtime.Op{Name: "ping", Kind: runtime.KindWrite, Params: []string{"id"}}
)

// pingBesideReport runs the suite of an agent whose turn runs a report
// (20 ms) and, in parallel, a ping (answered at once) under a deadline of
// 8 ms, made once more when ping returns context.DeadlineExceeded; call
// runs a tool through its traced wrapper. It returns how many scenarios
// have a trace note containing note, and fails the test for any of them
// that is not inconclusive.
func pingBesideReport(t *testing.T, call func(ctx context.Context, op *runtime.Op, d time.Duration) error, ping func(context.Context) error, note string) (int, *runtime.Report) {
	t.Helper()
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		var reportErr, pingErr error
		wg.Go(func() { reportErr = call(ctx, slowReportOp, 20*time.Millisecond) })
		wg.Go(func() {
			for range 2 {
				pctx, cancel := context.WithTimeout(ctx, 8*time.Millisecond)
				pingErr = ping(pctx)
				cancel()
				if !errors.Is(pingErr, context.DeadlineExceeded) {
					return
				}
			}
		})
		wg.Wait()
		return errors.Join(reportErr, pingErr)
	}
	rep := testkit.Run(&fakeT{name: t.Name()}, agent)
	held := 0
	for _, r := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		if !slices.ContainsFunc(r.Trace.Notes, func(n string) bool { return strings.Contains(n, note) }) {
			continue
		}
		held++
		if !r.Inconclusive {
			t.Errorf("%s: the ping's deadline ran out at a gate, and the scenario is not inconclusive", r.Scenario)
		}
	}
	return held, rep
}

// One model turn runs two calls in parallel: a report that takes 20 ms,
// and a ping the agent gives 8 ms, retried once when its deadline runs
// out. In production the ping is done in microseconds. A schedule that
// runs the report first holds the ping at its start gate while the report
// runs (a sleeping goroutine is busy: the gate waits), the ping's deadline
// runs out there, and a client that honours its context fails the ping:
// the agent then retries a ping that never timed out in production, and
// nothing said so (red team: a per-attempt timeout spent at a gate, in
// the baseline too on a loaded machine). Such a scenario is inconclusive,
// and its trace says which call's deadline ran out at which gate. A client
// that sends the ping all the same answers as in production: nothing is
// noted.
func TestDeadlineThatRanOutAtAGateMakesTheScenarioInconclusive(t *testing.T) {
	for _, honours := range []bool{true, false} {
		t.Run(map[bool]string{true: "a client that honours its context", false: "a client that ignores it"}[honours], func(t *testing.T) {
			call := func(ctx context.Context, op *runtime.Op, d time.Duration) error {
				return tracedCall(ctx, op, []any{"r-1"}, []any{"r-1"}, nil, func(ctx context.Context) error {
					if err := ctx.Err(); err != nil && honours {
						return err // a request whose context ended is not sent
					}
					time.Sleep(d)
					return nil
				})
			}
			held, rep := pingBesideReport(t, call, func(ctx context.Context) error { return call(ctx, quickPingOp, 0) },
				"ping's deadline ran out while the harness held the call at its start gate")
			switch {
			case honours && held == 0:
				t.Fatalf("no scenario noted the ping's deadline running out at its gate:\n%s", verdictOf(rep))
			case !honours && held != 0:
				t.Fatalf("%d scenarios noted a deadline that changed nothing the agent saw", held)
			}
		})
	}
}

// As above, with a client that does its work whatever its context says,
// called on a goroutine of its own while the agent waits for the answer or
// for the ping's deadline, whichever comes first (a select on the
// context), and pings again on the deadline. The ping answers at once in
// production; held at a gate for the report's 20 ms, its deadline runs
// out, and the agent gives up on it and pings again, though the call
// itself did not fail. Such a scenario is inconclusive and says why. An
// agent that waits for the answer itself is handed it, as in production:
// nothing is noted.
func TestCallMadeAgainAfterItsDeadlineRanOutAtAGateIsInconclusive(t *testing.T) {
	for _, selects := range []bool{true, false} {
		t.Run(map[bool]string{true: "the agent selects on the context", false: "the agent waits for the answer"}[selects], func(t *testing.T) {
			call := func(ctx context.Context, op *runtime.Op, d time.Duration) error {
				return tracedCall(ctx, op, []any{"r-1"}, []any{"r-1"}, nil, func(context.Context) error {
					time.Sleep(d)
					return nil
				})
			}
			ping := func(ctx context.Context) error {
				if !selects {
					return call(ctx, quickPingOp, 0)
				}
				answer := make(chan error, 1)
				go func() { answer <- call(ctx, quickPingOp, 0) }()
				select {
				case err := <-answer:
					return err
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			held, rep := pingBesideReport(t, call, ping, "and the agent made the call again")
			switch {
			case selects && held == 0:
				t.Fatalf("no scenario noted the ping made again after its deadline ran out at a gate:\n%s", verdictOf(rep))
			case !selects && held != 0:
				t.Fatalf("%d scenarios noted a deadline that changed nothing the agent saw", held)
			}
		})
	}
}
