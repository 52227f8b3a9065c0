package testkit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// paymentsTable is a payments table: pay appends a row; with keyed, a second
// payment of an order is answered from the first (the idem.Do fix), and
// the traced call says it was replayed.
type paymentsTable struct {
	mu    sync.Mutex
	rows  []string
	keyed bool
}

var payRowOp = &runtime.Op{Name: "pay", Kind: runtime.KindWrite, Params: []string{"order", "cents"}}

// Pay is the raw tool, which the agent should not call directly.
func (w *paymentsTable) Pay(ctx context.Context, order string, cents int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	row := fmt.Sprintf("%s:%d", order, cents)
	if w.keyed {
		for _, r := range w.rows {
			if r == row {
				runtime.MarkReplayed(ctx) // a no-op outside a traced call
				return nil
			}
		}
	}
	w.rows = append(w.rows, row)
	return nil
}

// PayTraced is what agentidem-gen writes for //agentidem:write
// identity=order name=pay.
func (w *paymentsTable) PayTraced(ctx context.Context, order string, cents int) error {
	return tracedCall(ctx, payRowOp, []any{order, cents}, []any{order}, nil, func(ctx context.Context) error {
		return w.Pay(ctx, order, cents)
	})
}

func (w *paymentsTable) snapshot() any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return map[string]any{"payments": append([]string{}, w.rows...)}
}

// An agent that retries through the raw tool, not the wrapper, paid twice
// after a lost acknowledgement, and lost_acknowledgement/pay#1 was SAFE
// with State given: one traced call, nothing repeated, nothing judged,
// though the world held two payments against the baseline's one; and the
// report's note said the agent "did not call the failed op again" (red
// team rtO #3, /tmp/rtO/user/sq TestUntracedRetry). The end differs from
// the baseline's in a way the traced calls do not explain: the scenario is
// inconclusive, and its note says what differs and points to
// agentidem-vet. The keyed twin (the same slip, on a sink that answers a
// second payment from the first) and an agent that does not retry end as
// the baseline does: SAFE, and no scenario inconclusive.
func TestAnUntracedRetryIsNoPlainPass(t *testing.T) {
	untraced := func(w **paymentsTable) func(context.Context) error {
		return func(ctx context.Context) error {
			if err := (*w).PayTraced(ctx, "o-1", 500); err != nil {
				return (*w).Pay(ctx, "o-1", 500)
			}
			return nil
		}
	}
	noRetry := func(w **paymentsTable) func(context.Context) error {
		return func(ctx context.Context) error { return (*w).PayTraced(ctx, "o-1", 500) }
	}
	// live makes Setup leave a goroutine running that never changes the
	// state, as a database/sql pool's do (the red team's SQLite world).
	live := false
	run := func(t *testing.T, agent func(**paymentsTable) func(context.Context) error, keyed, state bool) *runtime.Report {
		var w *paymentsTable
		var stop chan struct{}
		opts := []testkit.Option{testkit.NoSummary(),
			testkit.Setup(func(context.Context) error {
				w = &paymentsTable{keyed: keyed}
				if live {
					stop = make(chan struct{})
					go func(stop chan struct{}) { <-stop }(stop)
				}
				return nil
			}),
			testkit.Teardown(func(context.Context) error {
				if stop != nil {
					close(stop)
					stop = nil
				}
				return nil
			})}
		if state {
			opts = append(opts, testkit.State(func() any { return w.snapshot() }))
		}
		return testkit.Run(t, agent(&w), opts...)
	}
	lostAck := func(rep *runtime.Report) *runtime.Result {
		for _, res := range rep.Results {
			if res.Scenario == "lost_acknowledgement/pay#1" {
				return res
			}
		}
		t.Fatal("no lost_acknowledgement/pay#1 scenario")
		return nil
	}
	const unexplained = "the state at the end differs from the baseline's"

	untracedRetry := func(t *testing.T) {
		rep := run(t, untraced, false, true)
		res := lostAck(rep)
		if !res.Inconclusive && res.Safe {
			t.Fatalf("lost_acknowledgement/pay#1 is a plain pass, though the world holds two payments against the baseline's one")
		}
		notes := strings.Join(res.Trace.Notes, "\n")
		for _, w := range []string{unexplained, `added "o-1:500"`, "a direct call of a tool that has a Traced wrapper", "agentidem-vet", "lost_acknowledgement"} {
			if !strings.Contains(notes, w) {
				t.Errorf("the scenario's notes do not say %q:\n%s", w, notes)
			}
		}
		for _, n := range rep.Notes {
			if strings.Contains(n, "did not call the failed op again") || !strings.Contains(n, "agentidem-vet") {
				t.Errorf("the report's retry note is not true of an untraced retry: %s", n)
			}
		}
	}
	keyedTwin := func(t *testing.T) {
		rep := run(t, untraced, true, true)
		if !rep.Safe || rep.InconclusiveCount > 0 {
			t.Errorf("the keyed twin: safe %v, %d inconclusive (%s); want SAFE", rep.Safe, rep.InconclusiveCount, lostAck(rep).Trace.Notes)
		}
	}
	t.Run("untraced retry", untracedRetry)
	t.Run("untraced retry, keyed sink", keyedTwin)
	live = true
	t.Run("untraced retry, Setup leaves a goroutine", untracedRetry)
	t.Run("untraced retry, keyed sink, Setup leaves a goroutine", keyedTwin)
	live = false
	t.Run("no retry", func(t *testing.T) {
		rep := run(t, noRetry, true, true) // keyed, for the redeliveries
		if !rep.Safe || rep.InconclusiveCount > 0 {
			t.Errorf("an agent that does not retry: safe %v, %d inconclusive; want SAFE", rep.Safe, rep.InconclusiveCount)
		}
		if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "no traced call of the failed op followed") {
			t.Errorf("the report's retry note: %q", rep.Notes)
		}
	})
	t.Run("traced retry, keyed sink", func(t *testing.T) {
		rep := run(t, func(w **paymentsTable) func(context.Context) error {
			return func(ctx context.Context) error {
				if err := (*w).PayTraced(ctx, "o-1", 500); err != nil {
					return (*w).PayTraced(ctx, "o-1", 500)
				}
				return nil
			}
		}, true, true)
		if !rep.Safe || rep.InconclusiveCount > 0 {
			t.Errorf("a keyed traced retry: safe %v, %d inconclusive; want SAFE", rep.Safe, rep.InconclusiveCount)
		}
	})
}
