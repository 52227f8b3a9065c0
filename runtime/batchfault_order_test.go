package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// One model turn dispatches two tool calls at once and, as
// errgroup.WithContext does, cancels the turn's context at the first
// error: an order, and a mail keyed by the model's tool-call id. On an
// error other than a timeout the model emits the turn again, with new
// tool-call ids. In production the mail goes out while the order service
// is still answering, so the retried turn mails twice. An injected
// failure of the order (before_operation_failure, partial_batch_failure)
// must reach the agent as the answer of a call in flight with the mail,
// not before the mail ran: whether the suite sees the second mail may not
// depend on whether the order's op sorts before the mail's.
func TestBatchFailureArrivesAfterTheBatchRan(t *testing.T) {
	for _, orderName := range []string{"createOrder", "reserveOrder"} { // before and after "mail"
		t.Run(orderName, func(t *testing.T) {
			order := &Op{Name: orderName, Kind: KindWrite, Params: []string{"request"}}
			mail := &Op{Name: "mail", Kind: KindWrite, Params: []string{"callID", "to"}}
			var (
				mu     sync.Mutex
				orders map[string]bool
				mails  []string
			)
			call := func(ctx context.Context, op *Op, args []any, ident []any, body func() error) (err error) {
				c, ctx := Begin(ctx, op, args, ident, nil)
				if err := c.Start(); err != nil {
					return err
				}
				defer c.Recover(&err)
				if err := ctx.Err(); err != nil {
					return err // the tool's client sends nothing on a cancelled context
				}
				return c.Finish(body())
			}
			turn := func(ctx context.Context, n int) error {
				ctx, cancel := context.WithCancel(ctx)
				defer cancel()
				var (
					wg    sync.WaitGroup
					once  sync.Once
					first error
				)
				fail := func(err error) {
					if err != nil {
						once.Do(func() { first = err; cancel() })
					}
				}
				wg.Add(2)
				go func() {
					defer wg.Done()
					fail(call(ctx, order, []any{"req-1"}, []any{"req-1"}, func() error {
						mu.Lock()
						defer mu.Unlock()
						orders["req-1"] = true // deduplicated by request
						return nil
					}))
				}()
				go func() {
					defer wg.Done()
					id := fmt.Sprintf("call_%d_mail", n)
					fail(call(ctx, mail, []any{id, "ada"}, []any{"ada"}, func() error {
						mu.Lock()
						defer mu.Unlock()
						mails = append(mails, id) // deduplicated by tool-call id: a new id mails again
						return nil
					}))
				}()
				wg.Wait()
				return first
			}
			agent := func(ctx context.Context) error {
				for n := 1; ; n++ {
					err := turn(ctx, n)
					if err == nil || n == 3 || errors.Is(err, context.DeadlineExceeded) {
						return err
					}
				}
			}
			rep, err := Run(context.Background(), t.Name(), agent, Setup(func(context.Context) error {
				mu.Lock()
				orders, mails = map[string]bool{}, nil
				mu.Unlock()
				return nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{ScenarioBeforeFailure + "/" + orderName + "#1", ScenarioPartialBatch + "/" + orderName + "#1"} {
				found := false
				for _, res := range rep.Results {
					if res.Scenario != want {
						continue
					}
					for _, f := range res.Findings {
						if f.Code == CodeDuplicateWrite && len(f.Ops) == 1 && f.Ops[0] == "mail" {
							found = true
						}
					}
					if !found {
						t.Errorf("%s: no duplicate_write of mail; findings %+v", want, res.Findings)
					}
				}
			}
		})
	}
}
