package testkit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/realagents"
	"golang.org/x/sync/errgroup"
)

// verdictOf is the sorted list of "scenario code" lines of a report's
// error findings, and whether the report is safe.
func verdictOf(rep *runtime.Report) string {
	var lines []string
	for _, r := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		if r == nil {
			continue
		}
		for _, f := range r.Findings {
			if f.Severity == runtime.SeverityError {
				lines = append(lines, r.Scenario+" "+f.Code)
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

type payWorld struct {
	srv    *httptest.Server
	pay    *realagents.PayServer
	client *realagents.PayClient
}

func (w *payWorld) options(keys, slow, state, settle bool) []testkit.Option {
	opts := []testkit.Option{
		testkit.NoSummary(),
		testkit.StallTimeout(3 * time.Second),
		testkit.Setup(func(context.Context) error {
			w.pay = realagents.NewPayServer()
			w.pay.Keys, w.pay.SlowFirst = keys, slow
			w.srv = httptest.NewServer(w.pay)
			w.client = &realagents.PayClient{Base: w.srv.URL, HTTP: &http.Client{Timeout: 100 * time.Millisecond}}
			return nil
		}),
		testkit.Teardown(func(context.Context) error { w.srv.Close(); return nil }),
	}
	if state {
		opts = append(opts, testkit.State(func() any { return w.pay.Charges() }))
	}
	if settle {
		opts = append(opts, testkit.With(runtime.Settle(func(ctx context.Context) error { return w.pay.Idle(ctx) })))
	}
	return opts
}

// An agent charges an order through a payment API over HTTP, with a
// client timeout, and retries a failed charge. The slow server books the
// first request of an order once its client gave up. Without a key the
// agent is caught (duplicate_write); with an Idempotency-Key the server
// honours it is safe; each gets one verdict on every run. Not here: the
// naive agent on the slow server with State and a Settle. Its booking,
// landed after the timeout, is the failed call's only when it lands while
// the call runs; otherwise no call owns it, and which scenarios show the
// duplicate changes from run to run (the agent is caught on every run).
// Giving the failed call what lands before its retry made false
// duplicates of other writes' late effects (420dfbd, reverted).
func TestHTTPChargeVerdicts(t *testing.T) {
	for _, c := range []struct {
		name                      string
		keys, slow, state, settle bool
		safe                      bool
	}{
		{"naive", false, false, false, false, false},
		{"naive slow", false, true, false, false, false},
		{"keyed state", true, false, true, false, true},
		{"keyed slow", true, true, false, false, true},
		{"keyed slow state settle", true, true, true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &payWorld{}
			agent := func(ctx context.Context) error {
				var err error
				for range 3 {
					if c.keys {
						_, err = w.client.ChargeKeyedTraced(ctx, "o-1", 500)
					} else {
						_, err = w.client.ChargeTraced(ctx, "o-1", 500)
					}
					if err == nil {
						return nil
					}
				}
				return err
			}
			verdicts := map[string]int{}
			for range 2 {
				rep := testkit.Run(&fakeT{name: "TestCharge"}, agent, w.options(c.keys, c.slow, c.state, c.settle)...)
				noStall(t, rep)
				v := verdictOf(rep)
				verdicts[v]++
				if c.safe && v != "" {
					t.Errorf("safe agent got findings:\n%s", v)
				}
				if !c.safe && !strings.Contains(v, runtime.CodeDuplicateWrite) {
					t.Errorf("unsafe agent not caught:\n%s", v)
				}
			}
			if len(verdicts) != 1 {
				for v, n := range verdicts {
					t.Logf("%d runs:\n%s", n, v)
				}
				t.Errorf("%d verdicts", len(verdicts))
			}
		})
	}
}

// stable runs agent n times and checks every run gets the same verdict,
// with want's codes among it (or none, when want is empty).
func stable(t *testing.T, n int, agent func(ctx context.Context) error, opts func() []testkit.Option, want ...string) *runtime.Report {
	t.Helper()
	verdicts := map[string]int{}
	var last *runtime.Report
	for range n {
		rep := testkit.Run(&fakeT{name: "TestRealAgent"}, agent, append(opts(), testkit.NoSummary(), testkit.StallTimeout(3*time.Second))...)
		noStall(t, rep)
		v := verdictOf(rep)
		verdicts[v]++
		last = rep
		if len(want) == 0 && v != "" {
			t.Errorf("safe agent got findings:\n%s", v)
		}
		for _, c := range want {
			if !strings.Contains(v, c) {
				t.Errorf("want %s, got:\n%s", c, v)
			}
		}
	}
	if len(verdicts) != 1 {
		for v, n := range verdicts {
			t.Logf("%d runs:\n%s", n, v)
		}
		t.Errorf("%d verdicts in %d runs", len(verdicts), n)
	}
	return last
}

type queueWorld struct {
	ledger *realagents.Ledger
	q      *realagents.Queue
	stop   chan struct{}
	done   chan struct{}
}

func (w *queueWorld) options(keyed bool, state bool) []testkit.Option {
	opts := []testkit.Option{
		testkit.Setup(func(context.Context) error {
			w.ledger = realagents.NewLedger()
			w.q = &realagents.Queue{Jobs: make(chan realagents.Job)}
			w.stop, w.done = make(chan struct{}), make(chan struct{})
			go func(q *realagents.Queue, l *realagents.Ledger, stop, done chan struct{}) {
				defer close(done)
				for {
					select {
					case j := <-q.Jobs:
						var err error
						if keyed {
							err = l.CreditOnceTraced(j.Ctx, "refund:"+j.Account, j.Account, j.Cents)
						} else {
							err = l.CreditTraced(j.Ctx, j.Account, j.Cents)
						}
						j.Done <- err
					case <-stop:
						return
					}
				}
			}(w.q, w.ledger, w.stop, w.done)
			return nil
		}),
		testkit.Teardown(func(context.Context) error { close(w.stop); <-w.done; return nil }),
	}
	if state {
		opts = append(opts, testkit.State(func() any { return w.ledger.Snapshot() }))
	}
	return opts
}

// The agent submits a credit to a worker that Setup started, which makes
// the write with the agent's context; the agent resubmits on error. The
// naive sink is caught, the keyed one (idem.Do) passes with State.
func TestQueueWorkerVerdicts(t *testing.T) {
	for _, c := range []struct {
		name         string
		keyed, state bool
	}{{"naive", false, false}, {"naive state", false, true}, {"keyed state", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			w := &queueWorld{}
			agent := func(ctx context.Context) error {
				var err error
				for range 2 {
					if err = w.q.SubmitTraced(ctx, "acct-1", 300); err == nil {
						return nil
					}
				}
				return err
			}
			var want []string
			if !c.keyed {
				want = []string{runtime.CodeDuplicateWrite}
			}
			stable(t, 3, agent, func() []testkit.Option { return w.options(c.keyed, c.state) }, want...)
		})
	}
}

// One model turn creates two invoices and attaches one, with errgroup:
// attaching in the same batch as its prerequisite is
// dependent_calls_concurrent; waiting for the creates first passes.
func TestFanOutVerdicts(t *testing.T) {
	for _, c := range []struct {
		name  string
		wait  bool // create first, then attach: the fixed agent
		state bool
	}{{"parallel", false, false}, {"parallel state", false, true}, {"ordered", true, false}, {"ordered state", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			var b *realagents.Invoices
			agent := func(ctx context.Context) error {
				// One model turn: create two invoices and attach one.
				g, gctx := errgroup.WithContext(ctx)
				g.Go(func() error { return b.CreateTraced(gctx, "INV-1") })
				g.Go(func() error { return b.CreateTraced(gctx, "INV-2") })
				if c.wait {
					if err := g.Wait(); err != nil {
						return err
					}
					return b.AttachTraced(ctx, "ORD-9", "INV-1")
				}
				g.Go(func() error { return b.AttachTraced(gctx, "ORD-9", "INV-1") })
				return g.Wait()
			}
			opts := func() []testkit.Option {
				o := []testkit.Option{testkit.Setup(func(context.Context) error { b = realagents.NewInvoices(); return nil })}
				if c.state {
					o = append(o, testkit.State(func() any { return b.Snapshot() }))
				}
				return o
			}
			var want []string
			if !c.wait {
				want = []string{runtime.CodeDependentCallsConcurrent}
			}
			stable(t, 3, agent, opts, want...)
		})
	}
}

// One model turn credits two accounts in parallel; on any error the agent
// runs the whole turn again, as a naive tool loop does: caught
// (duplicate_write, partial_batch_replay) unless the credits are keyed.
func TestBatchRetryVerdicts(t *testing.T) {
	for _, c := range []struct {
		name         string
		keyed, state bool
	}{{"naive", false, false}, {"naive state", false, true}, {"keyed", true, false}, {"keyed state", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			var l *realagents.Ledger
			turn := func(ctx context.Context) error {
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, acct := range []string{"a", "b"} {
					wg.Go(func() {
						if c.keyed {
							errs[i] = l.CreditOnceTraced(ctx, "turn1:"+acct, acct, 100)
						} else {
							errs[i] = l.CreditTraced(ctx, acct, 100)
						}
					})
				}
				wg.Wait()
				return errors.Join(errs...)
			}
			agent := func(ctx context.Context) error {
				if err := turn(ctx); err != nil {
					return turn(ctx)
				}
				return nil
			}
			opts := func() []testkit.Option {
				o := []testkit.Option{testkit.Setup(func(context.Context) error { l = realagents.NewLedger(); return nil })}
				if c.state {
					o = append(o, testkit.State(func() any { return l.Snapshot() }))
				}
				return o
			}
			var want []string
			if !c.keyed {
				want = []string{runtime.CodeDuplicateWrite, runtime.CodePartialBatchReplay}
			}
			stable(t, 3, agent, opts, want...)
		})
	}
}
