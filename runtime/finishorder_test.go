package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two creates of one turn on different entities (an invoice for acme, one
// for globex) commute: which lands first is no matter, and the
// exploration does not vary their starts. But the agent sees their
// answers in the order they finish: one that calls the invoice of the
// first answer its primary one ends otherwise when they finish the other
// way round. With their finishes always in class order, no schedule ran
// them so and the agent passed; the reverse schedule now finishes them
// the other way round, and order_variant_outcome is reported. An agent
// that picks acme's invoice whatever the order passes.
func TestAnswersOfCommutingCallsComeBackInEitherOrder(t *testing.T) {
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"customer"}}
	for _, byCompletion := range []bool{true, false} {
		t.Run(fmt.Sprintf("primary by completion=%v", byCompletion), func(t *testing.T) {
			var (
				mu       sync.Mutex
				next     int
				invoices map[string]string
				primary  string
			)
			newInvoice := func(ctx context.Context, customer string) (id string, err error) {
				args := []any{customer}
				c, _ := Begin(ctx, create, args, args, args)
				if err := c.Start(); err != nil {
					return "", err
				}
				defer c.Recover(&err)
				mu.Lock()
				next++
				id = fmt.Sprintf("INV-%d", next)
				invoices[id] = customer
				mu.Unlock()
				return id, c.Finish(nil, id)
			}
			agent := func(ctx context.Context) error {
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, customer := range []string{"acme", "globex"} {
					wg.Go(func() {
						_, err := newInvoice(ctx, customer)
						errs[i] = err
						mu.Lock()
						if primary == "" && (byCompletion || customer == "acme") {
							primary = customer
						}
						mu.Unlock()
					})
				}
				wg.Wait()
				return errs[0]
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error { next, invoices, primary = 0, map[string]string{}, ""; return nil }),
				Outcome(func() any {
					mu.Lock()
					defer mu.Unlock()
					return map[string]any{"invoices": len(invoices), "primary": primary}
				}))
			require.NoError(t, err)
			require.True(t, rep.BaselineSucceeded)
			assert.Equal(t, byCompletion, rep.Has(CodeOrderVariantOutcome), "%v", codes(rep))
			assert.False(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
		})
	}
}

// The reverse order of a round keeps the starts of different classes in
// class order and finishes them the other way round; within a class,
// both are reversed.
func TestReversedFinishesClassesTheOtherWayRound(t *testing.T) {
	two := roundShape{labels: []string{"a", "b"}, classes: [][]int{{0}, {1}}}
	assert.Equal(t, []Step{{Call: 0}, {Call: 1}, {Call: 1, Finish: true}, {Call: 0, Finish: true}}, two.reversed())
	mixed := roundShape{labels: []string{"a", "b", "c"}, classes: [][]int{{0, 1}, {2}}}
	assert.Equal(t, []Step{{Call: 1}, {Call: 2}, {Call: 0}, {Call: 2, Finish: true}, {Call: 1, Finish: true}, {Call: 0, Finish: true}}, mixed.reversed())
	one := roundShape{labels: []string{"a", "b"}, classes: [][]int{{0, 1}}}
	assert.Equal(t, []Step{{Call: 1}, {Call: 0}, {Call: 1, Finish: true}, {Call: 0, Finish: true}}, one.reversed())
}
