package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// Two goroutines an agent fans out, each taking one mutex around its tool
// call: create_invoice in one, attach_invoice (after=create_invoice) in the
// other. Whichever takes the lock first runs first, and the scheduler,
// which holds a call only at its gates, after the lock was taken, saw one
// call at a time and explored one order. Production may run the other:
// attach before its invoice exists. An agent that waits for the creation
// before it attaches is fine, and so is one whose goroutine takes the lock
// before it starts the other: that order is the program's.
func TestDependentCallsOrderedOnlyByALock(t *testing.T) {
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"invoice"}}
	attach := &Op{Name: "attach_invoice", Kind: KindWrite, Params: []string{"invoice"}, After: []string{"create_invoice"}}
	var (
		mu      sync.Mutex
		created map[string]bool
	)
	setup := Setup(func(context.Context) error {
		mu.Lock()
		created = map[string]bool{}
		mu.Unlock()
		return nil
	})
	call := func(ctx context.Context, op *Op, id string) error {
		return traced(ctx, op, []any{id}, []any{id}, func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			if op == create {
				created[id] = true
				return nil
			}
			if !created[id] {
				return errors.New("no invoice " + id)
			}
			return nil
		})
	}
	fanOut := func(first, second *Op) func(context.Context) error {
		return func(ctx context.Context) error {
			var lock sync.Mutex
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, op := range []*Op{first, second} {
				wg.Go(func() {
					lock.Lock()
					defer lock.Unlock()
					errs[i] = call(ctx, op, "INV-1")
				})
			}
			wg.Wait()
			return errors.Join(errs...)
		}
	}
	for _, tc := range []struct {
		name  string
		agent func(context.Context) error
		found bool
	}{
		{"fanned out under one mutex, create's goroutine first", fanOut(create, attach), true},
		{"fanned out under one mutex, attach's goroutine first", fanOut(attach, create), true},
		{"attach after the creation returned", func(ctx context.Context) error {
			if err := call(ctx, create, "INV-1"); err != nil {
				return err
			}
			return call(ctx, attach, "INV-1")
		}, false},
		{"the lock taken before the attach's goroutine started", func(ctx context.Context) error {
			var lock sync.Mutex
			lock.Lock()
			done := make(chan error, 1)
			go func() {
				var err error
				defer func() { done <- err }() // a crash ends the goroutine at its call
				lock.Lock()
				defer lock.Unlock()
				err = call(ctx, attach, "INV-1")
			}()
			err := call(ctx, create, "INV-1")
			lock.Unlock()
			return errors.Join(err, <-done)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 3 { // the same verdict every run
				rep, err := Run(context.Background(), t.Name(), tc.agent, setup)
				if err != nil {
					t.Fatal(err)
				}
				if got := rep.Has(CodeDependentCallsConcurrent); got != tc.found {
					var where []string
					for _, f := range rep.Errors() {
						where = append(where, f.Code+" in "+f.Scenario+": "+f.Message)
					}
					t.Fatalf("dependent_calls_concurrent reported: %v, want %v; errors: %v", got, tc.found, where)
				}
			}
		})
	}
}
