package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A tool without an error result panics inside a dispatcher's goroutine
// whose recover would, in production, turn the panic into an answer. The
// suite ends that goroutine instead (Call.Recover: runtime.Goexit, which
// no recover stops), so the agent waits until the stall bound: agent_panic
// says why, and what to change. A tool with an error result returns the
// panic as an error and says nothing of the kind.
func TestToolPanicWithoutErrorResultSaysWhyTheAgentWaits(t *testing.T) {
	label := &Op{Name: "label", Kind: KindWrite, Params: []string{"order"}, NoError: true}
	labelErr := &Op{Name: "labelErr", Kind: KindWrite, Params: []string{"order"}}
	dispatch := func(ctx context.Context, op *Op) error {
		res := make(chan error, 1)
		go func() {
			defer func() {
				if v := recover(); v != nil {
					res <- errors.New("tool panicked")
				}
			}()
			c, _ := Begin(ctx, op, []any{"o-1"}, []any{"o-1"}, nil)
			_ = c.Start()
			var err error
			func() {
				if op.NoError {
					defer c.Recover(nil)
				} else {
					defer c.Recover(&err)
				}
				panic("printer on fire")
			}()
			_ = c.Finish(err)
			res <- err
		}()
		select {
		case err := <-res:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, c := range []struct {
		op   *Op
		says bool
	}{{label, true}, {labelErr, false}} {
		rep, _ := Run(context.Background(), t.Name(), func(ctx context.Context) error {
			_ = dispatch(ctx, c.op) // the agent carries on, as it would in production
			return nil
		}, StallTimeout(300*time.Millisecond))
		var msg string
		for _, f := range rep.Baseline.Findings {
			if f.Code == CodeAgentPanic {
				msg = f.Message
			}
		}
		if msg == "" {
			t.Fatalf("%s: no agent_panic in the baseline: %+v", c.op.Name, rep.Baseline.Findings)
		}
		if got := strings.Contains(msg, "has no error result") && strings.Contains(msg, "runtime.Goexit"); got != c.says {
			t.Errorf("%s: the agent_panic message says why the recover did not run: %v, want %v:\n%s", c.op.Name, got, c.says, msg)
		}
	}
}
