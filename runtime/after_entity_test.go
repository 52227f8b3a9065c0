package runtime

import (
	"context"
	"errors"
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
