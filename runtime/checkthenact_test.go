package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A red team (rtW #9b) signed customers up with a find, then a create when
// none was found: in duplicate_delivery/concurrent both deliveries' finds
// ran before either create, and each created the customer. The finding
// ended "make the write idempotent at the sink (idem.Store) or re-read
// before retrying", though the agent did read, and nothing was retried:
// the check and the write must be one step at the sink. The twin's create
// skips an email that exists (a unique key at the sink): SAFE.

var findCustomerOp = &Op{Name: "find_customer", Kind: KindRead, Params: []string{"email"}}

// signup finds the customer and creates it when none was found.
func signup(unique bool) func(ctx context.Context, p *payments) error {
	return func(ctx context.Context, p *payments) error {
		found := false
		c, _ := Begin(ctx, findCustomerOp, []any{"a@example.com"}, nil, []any{"a@example.com"})
		if err := c.Start(); err != nil {
			return err
		}
		p.mu.Lock()
		for _, e := range p.customers {
			found = found || e == "a@example.com"
		}
		p.mu.Unlock()
		if err := c.Finish(nil, found); err != nil {
			return err
		}
		if found {
			return nil
		}
		return traced(ctx, createCustomerOp, []any{"a@example.com"}, []any{"a@example.com"}, func(context.Context) error {
			p.mu.Lock()
			defer p.mu.Unlock()
			if unique {
				for _, e := range p.customers {
					if e == "a@example.com" {
						return nil
					}
				}
			}
			p.customers = append(p.customers, "a@example.com")
			return nil
		})
	}
}

func TestCheckThenActInConcurrentDeliveriesIsSaid(t *testing.T) {
	for range 3 {
		buggy := runPayments(t, signup(false))
		r := resultOf(t, buggy, ScenarioDuplicateConcurrent)
		require.Contains(t, resultCodes(r), CodeDuplicateWrite, "notes %v", r.Trace.Notes)
		var msg string
		for _, f := range r.Findings {
			if f.Code == CodeDuplicateWrite {
				msg = f.Message
			}
		}
		assert.Contains(t, msg, "the deliveries ran at once, and 2:find_customer#2, delivery 2's read of the same entity, began before 1:create_customer#1: a check-then-act")
		assert.Contains(t, msg, "a unique constraint the write hits, a lock held around the check and the write")
		assert.NotContains(t, msg, "re-read before retrying")

		fixed := runPayments(t, signup(true))
		assert.True(t, fixed.Safe, "a create keyed at the sink: %v", findings(fixed, ""))
	}
}
