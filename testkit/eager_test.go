package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

var (
	readyLookup = &runtime.Op{Name: "lookup", Kind: runtime.KindRead, Params: []string{"key"}}
	readySet    = &runtime.Op{Name: "set_status", Kind: runtime.KindWrite, Params: []string{"key", "status"}, Idempotent: true}
)

// readyWorld is an invoice store in memory: create_invoice opens an
// invoice, attach_invoice (after=create_invoice) files a link to one,
// dangling when it does not exist yet, set_status sets a key's status.
type readyWorld struct {
	mu       sync.Mutex
	invoices map[string]bool
	links    map[string]string
	status   map[string]string
}

func (w *readyWorld) reset(context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.invoices, w.links, w.status = map[string]bool{}, map[string]string{}, map[string]string{}
	return nil
}

func (w *readyWorld) state() any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprint(w.invoices, w.links, w.status)
}

func (w *readyWorld) call(ctx context.Context, op *runtime.Op, args []any, body func()) error {
	c, _ := runtime.Begin(ctx, op, args, args, args[:1])
	if err := c.Start(); err != nil {
		return err
	}
	w.mu.Lock()
	body()
	w.mu.Unlock()
	return c.Finish(nil)
}

// branches runs its functions on goroutines of their own and waits for
// them all, as an agent runs a turn's parallel branches.
func branches(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() { errs[i] = fn() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// A branch's second call, made once its first returned, beside a branch
// still in flight: the attach after a lookup beside the create of its
// invoice, the second write of a status after a lookup beside the first.
// The scheduler held it for the next round, after the round's held calls
// had finished, and both bugs passed as SAFE, on real time and with
// VirtualTime (red team rX, MISS 5 and 6). Its eager schedules start it
// at once: both fail, with the finding in an eager schedule, and their
// correct twins (the branch waits for the other's answer first) pass.
func TestBranchNextCallStartsBesideTheRoundsHeldCalls(t *testing.T) {
	w := &readyWorld{}
	create := func(ctx context.Context) error {
		return w.call(ctx, staggerCreate, []any{"INV-1"}, func() { w.invoices["INV-1"] = true })
	}
	attach := func(ctx context.Context) error {
		return w.call(ctx, staggerAttach, []any{"INV-1"}, func() {
			w.links["INV-1"] = "linked"
			if !w.invoices["INV-1"] {
				w.links["INV-1"] = "dangling"
			}
		})
	}
	lookup := func(ctx context.Context, key string) error {
		return w.call(ctx, readyLookup, []any{key}, func() {})
	}
	set := func(ctx context.Context, status string) error {
		return w.call(ctx, readySet, []any{"INV-1", status}, func() { w.status["INV-1"] = status })
	}
	agents := []struct {
		name  string
		agent func(context.Context) error
		want  string // the finding, "" for SAFE
	}{
		{"attach after a lookup", func(ctx context.Context) error {
			return branches(func() error { return create(ctx) }, func() error {
				if err := lookup(ctx, "config"); err != nil {
					return err
				}
				return attach(ctx)
			})
		}, runtime.CodeDependentCallsConcurrent},
		{"attach once created", func(ctx context.Context) error {
			created := make(chan error, 1)
			return branches(func() error { err := create(ctx); created <- err; return err }, func() error {
				if err := lookup(ctx, "config"); err != nil {
					return err
				}
				if err := <-created; err != nil {
					return nil
				}
				return attach(ctx)
			})
		}, ""},
		{"second write after a lookup", func(ctx context.Context) error {
			return branches(func() error { return set(ctx, "paid") }, func() error {
				if err := lookup(ctx, "x"); err != nil {
					return err
				}
				return set(ctx, "void")
			})
		}, runtime.CodeConcurrentWritesEntity},
		{"second write once the first returned", func(ctx context.Context) error {
			wrote := make(chan error, 1)
			return branches(func() error { err := set(ctx, "paid"); wrote <- err; return err }, func() error {
				if err := lookup(ctx, "x"); err != nil {
					return err
				}
				if err := <-wrote; err != nil {
					return err
				}
				return set(ctx, "void")
			})
		}, ""},
	}
	for _, virtual := range []bool{false, true} {
		for _, a := range agents {
			t.Run(fmt.Sprintf("%s/virtual=%v", a.name, virtual), func(t *testing.T) {
				opts := []testkit.Option{testkit.NoSummary(), testkit.Setup(w.reset), testkit.State(w.state)}
				if virtual {
					opts = append(opts, testkit.VirtualTime())
				}
				rep := testkit.Run(&fakeT{name: "TestBranch"}, a.agent, opts...)
				if !rep.BaselineSucceeded {
					t.Fatalf("baseline failed: %s", rep.BaselineFailure)
				}
				if a.want == "" {
					if !rep.Safe {
						t.Errorf("UNSAFE, want SAFE: %v", rep.Findings)
					}
					return
				}
				if rep.Safe || !rep.Has(a.want) {
					t.Fatalf("safe %v, %s %v; want UNSAFE with it: %v", rep.Safe, a.want, rep.Has(a.want), rep.Findings)
				}
				eager := false
				for _, res := range rep.Results {
					if res.Kind == runtime.ScenarioInterleaving && strings.HasPrefix(res.Schedule, "eager.") {
						for _, f := range res.Findings {
							eager = eager || f.Code == a.want
						}
					}
				}
				if !eager {
					t.Errorf("no eager schedule has %s", a.want)
				}
			})
		}
	}
}
