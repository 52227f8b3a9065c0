package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// A model turn that attaches an invoice created and seen a turn before,
// beside the creation of another invoice: attach_invoice declares
// after=create_invoice, but its own invoice's creation had returned before
// it started, and nothing links it to the other one. The same attach
// dispatched beside the creation of its own invoice is the bug, and so is
// one whose invoice's creation failed, or one that follows the creation of
// another invoice only.
func TestAfterPrerequisiteOnAnotherEntity(t *testing.T) {
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"invoice"}}
	attach := &Op{Name: "attach_invoice", Kind: KindWrite, Params: []string{"invoice"}, After: []string{"create_invoice"}}
	call := func(ctx context.Context, op *Op, id string, fail bool) error {
		return traced(ctx, op, []any{id}, []any{id}, func(context.Context) error {
			if fail {
				return errors.New("rejected")
			}
			return nil
		})
	}
	// agent creates before, waits for it, then dispatches attach(target)
	// beside create(beside) in one turn.
	agent := func(before, target, beside string, beforeFails bool) func(context.Context) error {
		return func(ctx context.Context) error {
			_ = call(ctx, create, before, beforeFails)
			var wg sync.WaitGroup
			errs := make([]error, 2)
			wg.Go(func() { errs[0] = call(ctx, attach, target, false) })
			wg.Go(func() { errs[1] = call(ctx, create, beside, false) })
			wg.Wait()
			return errors.Join(errs...)
		}
	}
	for _, tc := range []struct {
		name                string
		before, target, bes string
		beforeFails, found  bool
	}{
		{"its invoice created a turn before", "INV-9", "INV-9", "INV-7", false, false},
		{"beside its own invoice's creation", "INV-7", "INV-9", "INV-9", false, true},
		{"after another invoice's creation only", "INV-7", "INV-9", "INV-8", false, true},
		{"its invoice's creation failed", "INV-9", "INV-9", "INV-7", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), t.Name(), agent(tc.before, tc.target, tc.bes, tc.beforeFails))
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Has(CodeDependentCallsConcurrent); got != tc.found {
				var where []string
				for _, f := range rep.Errors() {
					where = append(where, f.Code+" in "+f.Scenario)
				}
				t.Errorf("dependent_calls_concurrent reported: %v, want %v; errors: %v", got, tc.found, where)
			}
		})
	}
}

// An attach keyed by invoice that follows the create, keyed by order, whose
// answer named the invoice, waited for its own prerequisite: another
// order's create beside it is not what it waits for (a red team's billing
// agent, two orders billed in parallel goroutines, was found UNSAFE). The
// answer links the two ops; where it names another invoice, or the create
// failed, or the create that names it is the one beside the attach, the
// finding stands. Fails without answerNames in prerequisiteDone.
func TestAfterPrerequisiteNamedByItsAnswer(t *testing.T) {
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"order"}}
	attach := &Op{Name: "attach_invoice", Kind: KindWrite, Params: []string{"invoice"}, After: []string{"create_invoice"}}
	// createCall creates order's invoice and answers its id, as
	// {"id": "INV-<order>"} when object is set.
	createCall := func(ctx context.Context, order string, fail, object bool) (string, error) {
		args := []any{order}
		c, _ := Begin(ctx, create, args, args, nil)
		if err := c.Start(); err != nil {
			return "", err
		}
		if fail {
			return "", c.Finish(errors.New("rejected"))
		}
		id := "INV-" + order
		var answer any = id
		if object {
			answer = map[string]any{"id": id, "cents": 4200}
		}
		if err := c.Finish(nil, answer); err != nil {
			return "", err
		}
		return id, nil
	}
	attachCall := func(ctx context.Context, invoice string) error {
		return traced(ctx, attach, []any{invoice}, []any{invoice}, func(context.Context) error { return nil })
	}
	// agent creates before's invoice, waits for it, then dispatches the
	// attach of target's invoice beside the creation of beside's.
	agent := func(before, target, beside string, beforeFails, object bool) func(context.Context) error {
		return func(ctx context.Context) error {
			_, _ = createCall(ctx, before, beforeFails, object)
			var wg sync.WaitGroup
			errs := make([]error, 2)
			wg.Go(func() { errs[0] = attachCall(ctx, "INV-"+target) })
			wg.Go(func() { _, errs[1] = createCall(ctx, beside, false, object) })
			wg.Wait()
			return errors.Join(errs...)
		}
	}
	for _, tc := range []struct {
		name                      string
		before, target, beside    string
		beforeFails, object, want bool
	}{
		{"its invoice named by the answer a turn before", "ORD-9", "ORD-9", "ORD-7", false, false, false},
		{"its invoice named inside an answer object", "ORD-9", "ORD-9", "ORD-7", false, true, false},
		{"beside the create that names its invoice", "ORD-7", "ORD-9", "ORD-9", false, false, true},
		{"after another order's create only", "ORD-7", "ORD-9", "ORD-8", false, false, true},
		{"its order's create failed", "ORD-9", "ORD-9", "ORD-7", true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), t.Name(), agent(tc.before, tc.target, tc.beside, tc.beforeFails, tc.object))
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Has(CodeDependentCallsConcurrent); got != tc.want {
				var where []string
				for _, f := range rep.Errors() {
					where = append(where, f.Code+" in "+f.Scenario+": "+f.Message)
				}
				t.Errorf("dependent_calls_concurrent reported: %v, want %v; errors: %v", got, tc.want, where)
			}
		})
	}
}

// Two orders billed at once, each in a goroutine that dispatches its
// create and its attach in one turn, on a strict sink (the attach of an
// invoice not yet created fails, and the baseline with it): the findings
// pair each attach with the create whose answer names its invoice, and
// name both calls. Before, the failed baseline had four findings of one
// text, every create beside every attach, two of them pairing an attach
// with the other order's create (a red team's billing agent).
func TestAfterFindingPairsTheCreateThatNamesTheEntity(t *testing.T) {
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"order"}}
	attach := &Op{Name: "attach_invoice", Kind: KindWrite, Params: []string{"order", "invoice"}, After: []string{"create_invoice"}}
	// The sink is strict: an attach of an invoice not created fails, and
	// the baseline with it.
	var mu sync.Mutex
	created := map[string]bool{}
	// bill dispatches order's create and attach in one turn (the bug).
	bill := func(ctx context.Context, order string) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() {
			args := []any{order}
			c, _ := Begin(ctx, create, args, args, nil)
			if errs[0] = c.Start(); errs[0] == nil {
				mu.Lock()
				created["INV-"+order] = true
				mu.Unlock()
				errs[0] = c.Finish(nil, "INV-"+order)
			}
		})
		wg.Go(func() {
			// keyed by order, its entity the invoice
			inv := "INV-" + order
			c, _ := Begin(ctx, attach, []any{order, inv}, []any{order}, []any{inv})
			if errs[1] = c.Start(); errs[1] == nil {
				mu.Lock()
				var err error
				if !created[inv] {
					err = errors.New("no such invoice: " + inv)
				}
				mu.Unlock()
				if lost := c.Finish(err); lost != nil {
					err = lost
				}
				errs[1] = err
			}
		})
		wg.Wait()
		return errors.Join(errs...)
	}
	// agent bills two orders at once, each in a goroutine of its own.
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, order := range []string{"ORD-1", "ORD-2"} {
			wg.Go(func() { errs[i] = bill(ctx, order) })
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	rep, err := Run(context.Background(), t.Name(), agent, Setup(func(context.Context) error {
		clear(created)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, res := range append([]*Result{rep.Baseline}, rep.Results...) {
		if res == nil || res.Trace == nil {
			continue
		}
		entity := map[string]string{}
		for _, o := range res.Trace.Ops {
			entity[o.ID] = o.Entity
		}
		for _, f := range res.Findings {
			if f.Code != CodeDependentCallsConcurrent {
				continue
			}
			found++
			create, attach := entity[f.Calls[0]], entity[f.Calls[1]]
			if `"INV-`+strings.Trim(create, `"`)+`"` != attach {
				t.Errorf("%s: attach on %s reported beside the create on %s, another order's: %s", res.Scenario, attach, create, f.Message)
			}
			if !strings.Contains(f.Message, f.Calls[0]) || !strings.Contains(f.Message, f.Calls[1]) {
				t.Errorf("message does not name the calls %v: %s", f.Calls, f.Message)
			}
		}
	}
	if found == 0 {
		t.Errorf("no dependent_calls_concurrent; errors: %v", rep.Errors())
	}
}
