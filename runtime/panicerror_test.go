package runtime

import (
	"context"
	"strings"
	"testing"
	"time"
)

// codeError is an error type whose Error method reads its receiver: a
// typed nil *codeError returned as an error panics when its text is read.
type codeError struct{ code int }

func (e *codeError) Error() string { return "code " + string(rune('0'+e.code)) }

// A tool that returns a typed nil *codeError (var e *codeError; return v,
// e: a non-nil error whose Error method panics). Finish read the error's
// text while holding the call's lock; the panic ran the wrapper's deferred
// Recover, which took the same lock, and the test binary hung until go
// test's -timeout, every later test lost (a red team's agent). The suite
// now ends, the call recorded as failed with a text that names the nil
// error and the panic.
func TestAToolErrorWhoseErrorMethodPanicsEndsTheSuite(t *testing.T) {
	put := &Op{Name: "put", Kind: KindWrite, Params: []string{"key"}}
	call := func(ctx context.Context, key string) (err error) {
		c, cctx := Begin(ctx, put, []any{key}, []any{key}, nil)
		if err = c.Start(); err != nil {
			return err
		}
		defer c.Recover(&err)
		_ = cctx
		var e *codeError // typed nil: the returned error is not nil
		if lost := c.Finish(e, "ok"); lost != nil {
			return lost
		}
		return e
	}
	type outcome struct {
		rep *Report
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error {
			if err := call(ctx, "k"); err != nil {
				return nil // the agent gives up on it
			}
			return nil
		})
		done <- outcome{rep, err}
	}()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the suite did not end within 30s: a tool's error whose Error method panics hung it")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.rep.Baseline == nil || o.rep.Baseline.Trace == nil || len(o.rep.Baseline.Trace.Ops) != 1 {
		t.Fatalf("baseline trace: %+v", o.rep.Baseline)
	}
	op := o.rep.Baseline.Trace.Ops[0]
	if op.Status != StatusFailed || !strings.Contains(op.Error, "a nil *runtime.codeError (its Error method panicked") {
		t.Errorf("the call is recorded as %s with error %q, want failed, its text naming the nil error and the panic", op.Status, op.Error)
	}
}
