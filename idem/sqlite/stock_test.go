package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/idem/sqlite"
	"github.com/agentidem/agentidem-go/idem/sqlite/internal/stock"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

func openStock(t *testing.T) *stock.Warehouse {
	t.Helper()
	b, err := sqlite.Open(filepath.Join(t.TempDir(), "stock.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if _, err := b.DB().Exec(stock.Schema); err != nil {
		t.Fatal(err)
	}
	return &stock.Warehouse{DB: b.DB()}
}

func stockOptions(w *stock.Warehouse, skus ...string) []testkit.Option {
	return []testkit.Option{
		testkit.NoSummary(),
		testkit.StallTimeout(5 * time.Second),
		testkit.Setup(func(ctx context.Context) error { return w.Reset(ctx, 10, skus...) }),
		testkit.State(w.Snapshot),
	}
}

// errorLines is the report's error findings, one line each, sorted.
func errorLines(rep *runtime.Report) string {
	var lines []string
	for _, f := range rep.Findings {
		if f.Severity == runtime.SeverityError {
			lines = append(lines, f.Scenario+" "+f.Code+" "+strings.Join(f.Ops, ","))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// stockVerdicts runs the suite n times and wants one verdict whose error
// codes are want (none: safe).
func stockVerdicts(t *testing.T, n int, agent func(context.Context) error, opts []testkit.Option, want string) {
	t.Helper()
	verdicts := map[string]int{}
	for range n {
		rep := testkit.Run(t, agent, opts...)
		lines := errorLines(rep)
		verdicts[lines]++
		if got := errorCodes(rep); got != want {
			t.Errorf("error codes %q, want %q:\n%s", got, want, lines)
			for _, f := range rep.Findings {
				if f.Severity == runtime.SeverityError {
					t.Logf("%s %s: %s", f.Scenario, f.Code, f.Message)
				}
			}
		}
	}
	if len(verdicts) != 1 {
		for v, k := range verdicts {
			t.Logf("%d runs:\n%s", k, v)
		}
		t.Errorf("%d verdicts in %d runs", len(verdicts), n)
	}
}

type stockJob struct {
	sku string
	n   int
}

// A restock agent that starts its own pool of workers: they read jobs
// from a channel, call the tool with the agent's context, retry once on
// error, and send their result back over a channel.
func poolAgent(w *stock.Warehouse, set bool) func(context.Context) error {
	return func(ctx context.Context) error {
		jobs := make(chan stockJob)
		results := make(chan error)
		for range 3 {
			go func() {
				for j := range jobs {
					call := func() error {
						if set {
							return w.SetLevelTraced(ctx, j.sku, j.n)
						}
						return w.AdjustTraced(ctx, j.sku, j.n)
					}
					err := call()
					if err != nil {
						err = call()
					}
					results <- err
				}
			}()
		}
		skus := []string{"a", "b", "c"}
		go func() {
			for _, s := range skus {
				jobs <- stockJob{s, 5}
			}
			close(jobs)
		}()
		var errs []error
		for range skus {
			errs = append(errs, <-results)
		}
		return errors.Join(errs...)
	}
}

func TestStockWorkerPoolVerdicts(t *testing.T) {
	for _, c := range []struct {
		name string
		set  bool
		want string
	}{{"set", true, ""}, {"adjust", false, runtime.CodeDuplicateWrite}} {
		t.Run(c.name, func(t *testing.T) {
			w := openStock(t)
			stockVerdicts(t, 3, poolAgent(w, c.set), stockOptions(w, "a", "b", "c"), c.want)
		})
	}
}

// One model turn places three orders with errgroup, each retried once;
// the keyed transaction passes, the naive one is caught.
func TestStockErrgroupOrderVerdicts(t *testing.T) {
	for _, c := range []struct {
		name  string
		keyed bool
		want  string
	}{{"keyed", true, ""}, {"naive", false, runtime.CodeDuplicateWrite}} {
		t.Run(c.name, func(t *testing.T) {
			w := openStock(t)
			agent := func(ctx context.Context) error {
				// errgroup.WithContext, by hand: the first error cancels the rest.
				gctx, cancel := context.WithCancelCause(ctx)
				defer cancel(nil)
				var wg sync.WaitGroup
				var once sync.Once
				var first error
				for i, sku := range []string{"a", "b", "a"} {
					ref := fmt.Sprintf("o%d", i)
					wg.Go(func() {
						err := func() error {
							place := w.PlaceNaiveTraced
							if c.keyed {
								place = w.PlaceTraced
							}
							if err := place(gctx, ref, sku); err != nil {
								return place(gctx, ref, sku)
							}
							return nil
						}()
						if err != nil {
							once.Do(func() { first = err; cancel(err) })
						}
					})
				}
				wg.Wait()
				return first
			}
			stockVerdicts(t, 3, agent, stockOptions(w, "a", "b"), c.want)
		})
	}
}

// Tags with INSERT OR IGNORE, undeclared, State the judge: safe.
func TestStockInsertOrIgnoreIsSafe(t *testing.T) {
	w := openStock(t)
	agent := func(ctx context.Context) error {
		for _, tag := range []string{"fragile", "heavy"} {
			if err := w.TagTraced(ctx, "a", tag); err != nil {
				if err := w.TagTraced(ctx, "a", tag); err != nil {
					return err
				}
			}
		}
		return nil
	}
	stockVerdicts(t, 3, agent, stockOptions(w, "a"), "")
}

type stockRequest struct {
	ctx  context.Context
	sku  string
	n    int
	done chan error
}

// A dispatcher the test started before the suite (not Setup, not the
// agent) runs each request in a goroutine of its own, with the agent's
// context, as an in-process RPC server does; the agent sends one request
// per sku and collects the answers with plain receives.
func TestStockDispatcherTheTestStartedVerdicts(t *testing.T) {
	for _, c := range []struct {
		name string
		set  bool
		want string
	}{{"set", true, ""}, {"adjust", false, runtime.CodeDuplicateWrite}} {
		t.Run(c.name, func(t *testing.T) {
			w := openStock(t)
			reqs := make(chan stockRequest)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					case r := <-reqs:
						wg.Go(func() {
							if c.set {
								r.done <- w.SetLevelTraced(r.ctx, r.sku, r.n)
							} else {
								r.done <- w.AdjustTraced(r.ctx, r.sku, r.n)
							}
						})
					}
				}
			})
			defer func() { close(stop); wg.Wait() }()
			agent := func(ctx context.Context) error {
				var dones []chan error
				for _, sku := range []string{"a", "b"} {
					d := make(chan error, 1)
					reqs <- stockRequest{ctx, sku, 5, d}
					dones = append(dones, d)
				}
				var errs []error
				for i, d := range dones {
					err := <-d
					if err != nil { // retry once, as the agent's loop does
						d := make(chan error, 1)
						reqs <- stockRequest{ctx, []string{"a", "b"}[i], 5, d}
						err = <-d
					}
					errs = append(errs, err)
				}
				return errors.Join(errs...)
			}
			stockVerdicts(t, 3, agent, stockOptions(w, "a", "b"), c.want)
		})
	}
}
