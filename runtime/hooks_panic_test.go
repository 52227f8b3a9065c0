package runtime

import (
	"context"
	"sync/atomic"
	"testing"
)

// Two helpers each install a Teardown; the one given last panics. The
// other (stopping the worker its Setup started) still runs, as deferred
// calls do.
func TestTeardownsAllRunWhenOnePanics(t *testing.T) {
	var started, stopped atomic.Int32
	op := &Op{Name: "put", Kind: KindWrite, Params: []string{"k"}, Idempotent: true}
	agent := func(ctx context.Context) error {
		return traced(ctx, op, []any{"a"}, []any{"a"}, func(context.Context) error { return nil })
	}
	_, _ = Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error { started.Add(1); return nil }),
		Teardown(func(context.Context) error { stopped.Add(1); return nil }),
		Teardown(func(context.Context) error { panic("db already closed") }))
	if s, p := started.Load(), stopped.Load(); s != p {
		t.Fatalf("%d workers started, %d stopped", s, p)
	}
}
