package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// refundDesk is a support desk's refund API on an httptest server: POST
// /refund and POST /confirm, each for one order. confirm_refund declares
// after=refund: the customer is told of a refund only once it is made.
type refundDesk struct {
	srv *httptest.Server
}

var (
	deskRefund  = &Op{Name: "refund", Kind: KindWrite, Params: []string{"order"}}
	deskConfirm = &Op{Name: "confirm_refund", Kind: KindWrite, Params: []string{"order"}, After: []string{"refund"}}
	deskLookup  = &Op{Name: "lookup_order", Kind: KindRead, Params: []string{"order"}}
)

func newRefundDesk(t testing.TB) *refundDesk {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"ok":true,"path":%q}`, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return &refundDesk{srv: srv}
}

// call is one traced tool call: a request to path for order.
func (d *refundDesk) call(ctx context.Context, op *Op, path, order string) error {
	args := []any{order}
	return traced(ctx, op, args, args, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.srv.URL+path+"?order="+order, nil)
		if err != nil {
			return err
		}
		resp, err := d.srv.Client().Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
}

// turn runs one model turn's tool calls, each on a worker goroutine of its
// own, and waits for them all, as an agent loop runs a turn's parallel
// tool calls.
func turn(ctx context.Context, calls ...func(context.Context) error) error {
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// afterAgents are the agents of TestAfterCallStartedBeforeItsPrerequisite:
// the bug (the refund and its confirmation in one turn) and its correct
// twins, each with a read in flight beside its refund so that the suite
// explores schedules.
func afterAgents(d *refundDesk) map[string]func(context.Context) error {
	refund := func(ctx context.Context) error { return d.call(ctx, deskRefund, "/refund", "o-9") }
	confirm := func(ctx context.Context) error { return d.call(ctx, deskConfirm, "/confirm", "o-9") }
	lookup := func(ctx context.Context) error { return d.call(ctx, deskLookup, "/lookup", "o-9") }
	return map[string]func(context.Context) error{
		// One turn: the refund and the confirmation as parallel tool calls.
		"parallel": func(ctx context.Context) error { return turn(ctx, refund, confirm) },
		// The refund awaited, then the confirmation.
		"awaited": func(ctx context.Context) error {
			if err := turn(ctx, lookup, refund); err != nil {
				return err
			}
			return confirm(ctx)
		},
		// The confirmation a turn later, once the refund's result is in.
		"later turn": func(ctx context.Context) error {
			if err := turn(ctx, lookup, refund); err != nil {
				return err
			}
			return turn(ctx, confirm)
		},
		// One turn, but the confirmation's worker waits on a channel for
		// the refund's result before it calls the tool.
		"gated": func(ctx context.Context) error {
			refunded := make(chan error, 1)
			return turn(ctx, lookup,
				func(ctx context.Context) error { err := refund(ctx); refunded <- err; return err },
				func(ctx context.Context) error {
					if err := <-refunded; err != nil {
						return nil // not refunded: nothing to confirm
					}
					return confirm(ctx)
				})
		},
	}
}

// A call of an op that declares after= and was dispatched in one turn with
// its prerequisite is a finding in every schedule where it started before
// the prerequisite returned: where the two were in flight together, and
// where the schedule ran the dependent call first, to its end (s0f0s1f1,
// the worst order after= forbids, was no finding: the check was "in flight
// together"). Each such schedule carries the finding, its result unsafe,
// and a replay of it fails: kept at the first schedule only, the others
// read safe and their replays passed (red team rtV #14). The schedule in
// which the refund returned before the confirmation started is safe. The
// correct twins (the confirmation awaited, a turn later, or gated on the
// refund's result in its worker) are SAFE in every schedule.
func TestAfterCallStartedBeforeItsPrerequisite(t *testing.T) {
	d := newRefundDesk(t)
	agents := afterAgents(d)
	t.Run("parallel", func(t *testing.T) {
		rep, err := Run(context.Background(), t.Name(), agents["parallel"], OnlyScenario(ScenarioInterleaving))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Safe {
			t.Fatal("the refund and its confirmation in one turn read safe")
		}
		var shown, inOrder []string
		for _, res := range rep.Results {
			if res.Kind != ScenarioInterleaving || res.Trace == nil {
				continue
			}
			refund, confirm := opNamed(res.Trace, "refund"), opNamed(res.Trace, "confirm_refund")
			if refund == nil || confirm == nil {
				t.Fatalf("%s: a call is missing: %+v", res.Scenario, res.Trace.Ops)
			}
			early := confirm.StartTick < refund.EndTick
			found := resultHas(res, CodeDependentCallsConcurrent)
			switch {
			case res.Inconclusive && !found:
				t.Logf("%s inconclusive: %s", res.Scenario, res.Error) // the calls were not one round: nothing to judge
			case early != found:
				t.Errorf("%s (confirm starts at tick %d, the refund returns at %d): dependent_calls_concurrent %v, want %v; findings: %v",
					res.Scenario, confirm.StartTick, refund.EndTick, found, early, res.Findings)
			case found == res.Safe:
				t.Errorf("%s: safe %v with findings %v", res.Scenario, res.Safe, res.Findings)
			case early:
				shown = append(shown, res.Schedule)
			default:
				inOrder = append(inOrder, res.Schedule)
			}
		}
		if len(shown) != 5 || len(inOrder) != 1 {
			t.Errorf("schedules with the finding %v, in order %v; want 5 and 1", shown, inOrder)
		}
		var problems []Finding
		for _, p := range rep.Problems {
			if p.Code == CodeDependentCallsConcurrent {
				problems = append(problems, p)
			}
		}
		if len(problems) != 1 || len(problems[0].SeenIn) != len(shown) {
			t.Errorf("want one problem listing the %d schedules; got %+v", len(shown), problems)
		}
		// Each schedule replayed by itself (testkit.Replay,
		// AGENTIDEM_SCHEDULE): those with the finding fail alone too.
		for _, sched := range append(shown, inOrder...) {
			rep, err := Run(context.Background(), t.Name(), agents["parallel"], OnlyScenario(ScenarioInterleaving), Replay(sched))
			if err != nil {
				t.Fatal(err)
			}
			want := !slices.Contains(inOrder, sched)
			if got := rep.Has(CodeDependentCallsConcurrent); got != want || rep.Safe == want {
				t.Errorf("replay of %s: dependent_calls_concurrent %v, safe %v; want the finding %v; findings: %v", sched, got, rep.Safe, want, rep.Findings)
			}
		}
	})
	for _, name := range []string{"awaited", "later turn", "gated"} {
		t.Run(name, func(t *testing.T) {
			rep, err := Run(context.Background(), t.Name(), agents[name], OnlyScenario(ScenarioInterleaving))
			if err != nil {
				t.Fatal(err)
			}
			schedules := 0
			for _, res := range rep.Results {
				if res.Kind == ScenarioInterleaving && !res.Inconclusive {
					schedules++
				}
			}
			if !rep.Safe || rep.Has(CodeDependentCallsConcurrent) || schedules < 2 {
				t.Errorf("safe %v after %d schedules, want SAFE after 2 or more; findings: %v", rep.Safe, schedules, rep.Findings)
			}
		})
	}
}

func opNamed(tr *Trace, name string) *Operation {
	for i := range tr.Ops {
		if tr.Ops[i].Name == name {
			return &tr.Ops[i]
		}
	}
	return nil
}
