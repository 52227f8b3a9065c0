package runtime_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tracedErr runs fn as a call of op with the one argument arg, its
// identity: a wrapper's code, by hand.
func tracedErr(ctx context.Context, op *runtime.Op, arg string, fn func() error) (err error) {
	args := []any{arg}
	c, _ := runtime.Begin(ctx, op, args, args, nil)
	if err := c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	return c.Finish(fn())
}

// An outbox that a poller of Setup's drains every 200 ms, longer than the
// suite waits for an end: State (the balance) never sees a job land, in
// the baseline or after a repeat. Counted by its executions, the correct
// keyed enqueue was a duplicate_write on every run, with its poller asleep
// in a ticker's select, which looks at rest (red team rR #3). The repeat
// is not judged: inconclusive, saying to give a Settle. The unkeyed
// enqueue is not safe either. With no goroutine of Setup's running the
// user's code, a State that never sees the op's effect still counts each
// execution (it leaves out what the op changes).
func TestAPollerSlowerThanTheWaitLeavesTheRepeatUnjudged(t *testing.T) {
	enqueueOp := &runtime.Op{Name: "enqueue", Kind: runtime.KindWrite, Params: []string{"msg"}}
	for _, c := range []struct {
		name          string
		keyed, poller bool
	}{{"keyed", true, true}, {"unkeyed", false, true}, {"unkeyed, no poller", false, false}} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var jobs []string
			balance := 0
			var stop chan struct{}
			var done sync.WaitGroup
			halt := func() {
				if stop != nil {
					close(stop)
					done.Wait()
					stop = nil
				}
			}
			defer halt()
			agent := func(ctx context.Context) error {
				call := func() error {
					return tracedErr(ctx, enqueueOp, "m1", func() error {
						mu.Lock()
						defer mu.Unlock()
						for _, j := range jobs {
							if c.keyed && j == "m1" {
								return nil
							}
						}
						jobs = append(jobs, "m1")
						return nil
					})
				}
				if err := call(); err != nil {
					return call()
				}
				return nil
			}
			rep, err := runtime.Run(context.Background(), t.Name(), agent,
				runtime.Setup(func(context.Context) error {
					halt()
					mu.Lock()
					jobs, balance = nil, 0
					mu.Unlock()
					if !c.poller {
						return nil
					}
					stop = make(chan struct{})
					done.Add(1)
					go func(stop chan struct{}) {
						defer done.Done()
						tick := time.NewTicker(200 * time.Millisecond)
						defer tick.Stop()
						for {
							select {
							case <-stop:
								return
							case <-tick.C:
								mu.Lock()
								balance += 40 * len(jobs)
								jobs = nil
								mu.Unlock()
							}
						}
					}(stop)
					return nil
				}),
				runtime.State(func() any { mu.Lock(); defer mu.Unlock(); return map[string]int{"balance": balance} }))
			require.NoError(t, err)
			switch {
			case c.keyed:
				assert.True(t, rep.Safe, "the keyed enqueue: %v", rep.Findings)
				assert.Positive(t, rep.InconclusiveCount, "the repeats are not judged")
				for _, r := range rep.Results {
					if r.Inconclusive {
						assert.Contains(t, strings.Join(r.Trace.Notes, "\n"), "a goroutine that Setup started, running your code, was at", r.Scenario)
					}
				}
			case c.poller:
				assert.False(t, rep.Safe && rep.InconclusiveCount == 0, "the unkeyed enqueue passed silently")
			default:
				var codes []string
				for _, f := range rep.Findings {
					if f.Scenario == "lost_acknowledgement/enqueue#1" {
						codes = append(codes, f.Code)
					}
				}
				assert.Contains(t, codes, runtime.CodeDuplicateWrite, "a State that never sees the op's effect, in a world with nothing of the user's at work")
			}
		})
	}
}
