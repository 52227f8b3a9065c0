package testkit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	fcCustomerOp = &runtime.Op{Name: "create_customer", Kind: runtime.KindWrite, Params: []string{"name"}}
	fcInvoiceOp  = &runtime.Op{Name: "add_invoice", Kind: runtime.KindWrite, Params: []string{"customer", "amount"}, After: []string{"create_customer"}}
)

// An agent that makes a customer and the customer's invoice as two
// parallel tool calls (an errgroup), the invoice declared after the
// customer. Both tools write to a table that Setup did not make (a GORM
// model whose TableName was left out): every call fails, in either order.
// The baseline failed under the listed schedule, and its reverse failed
// too, yet testkit ran the two partial_batch_failure scenarios planned
// from it ("BASELINE FAILED — baseline failed, 2 fault scenarios (all 2
// faults fired)"), where the README says nothing runs after a failed
// baseline, and the order finding explained the failure by the order: "in
// the reverse order it did not" (red team, /tmp/rtP #9, rtp/parp9
// TestGBuggy, 4/4). Where both orders fail, the failure is the baseline's:
// baseline_failed, nothing else runs, and no order finding is made from
// it. Where only the listed order fails (the table is there: the listed
// order runs add_invoice's body first), the order finding stands, and
// says the reverse passed.
func TestAFailedBaselineRunsNothingAndBlamesNoOrder(t *testing.T) {
	for _, missing := range []bool{true, false} {
		name := "table there"
		if missing {
			name = "table missing"
		}
		t.Run(name, func(t *testing.T) {
			var (
				mu        sync.Mutex
				customers map[string]bool
				invoices  int
			)
			errMissing := errors.New(`ERROR: relation "g_customers" does not exist (SQLSTATE 42P01)`)
			customer := func(ctx context.Context, name string) error {
				return tracedCall(ctx, fcCustomerOp, []any{name}, []any{name}, nil, func(context.Context) error {
					if missing {
						return errMissing
					}
					mu.Lock()
					defer mu.Unlock()
					customers[name] = true
					return nil
				})
			}
			invoice := func(ctx context.Context, name string) error {
				return tracedCall(ctx, fcInvoiceOp, []any{name, 100}, []any{name}, nil, func(context.Context) error {
					if missing {
						return errMissing
					}
					mu.Lock()
					defer mu.Unlock()
					if !customers[name] {
						return errors.New("customer " + name + " not found")
					}
					invoices++
					return nil
				})
			}
			agent := func(ctx context.Context) error {
				var wg sync.WaitGroup
				errs := make([]error, 2)
				wg.Add(2)
				go func() { defer wg.Done(); errs[0] = customer(ctx, "acme") }()
				go func() { defer wg.Done(); errs[1] = invoice(ctx, "acme") }()
				wg.Wait()
				return errors.Join(errs...)
			}
			ft := &fakeT{name: "TestGBuggy"}
			rep := testkit.TestAgent(ft, agent, testkit.NoSummary(),
				testkit.Setup(func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					customers, invoices = map[string]bool{}, 0
					return nil
				}),
				testkit.State(func() any {
					mu.Lock()
					defer mu.Unlock()
					return map[string]any{"customers": len(customers), "invoices": invoices}
				}))
			require.True(t, ft.failed(), "a baseline that fails in the listed order passed")
			var order []string
			for _, f := range rep.Findings {
				if f.Code == runtime.CodeDependentCallsConcurrent {
					order = append(order, f.Message)
				}
			}
			if !missing {
				require.NotEmpty(t, order, "the order's failure was not told")
				assert.Contains(t, order[0], "in the reverse order it did not")
				return
			}
			var ran []string
			for _, res := range rep.Results {
				ran = append(ran, res.Scenario)
			}
			assert.Empty(t, ran, "scenarios ran after a failed baseline")
			assert.Empty(t, order, "a failure of both orders was explained by the order")
			assert.True(t, rep.Has(runtime.CodeBaselineFailed), "the failed baseline was not told: %v", rep.Findings)
			joined := strings.Join(ft.errors, "\n")
			assert.Contains(t, joined, `relation "g_customers" does not exist`)
			assert.NotContains(t, joined, "in the reverse order it did not")
		})
	}
}
