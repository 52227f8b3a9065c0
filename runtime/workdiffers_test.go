package runtime

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An agent that adds one line to each of two orders, from one line of its
// code, keyed by the order's id (random, as a sink hands them out) and the
// item, with the same quantity: the second order's call, after the first
// failed, is other work (its item, pear, is not the first's, apple, and
// the baseline's calls held both), not a retry under a fresh key. The red
// team's agent (/tmp/rt29 s1 TestServerID) ran the two in goroutines of an
// errgroup, so the other order's call came between a failed call and its
// retry; here the agent moves on after a failure, so it always does. It
// was identity_unstable (an error) in every fault scenario of the first
// call. An agent that retries with a fresh key per attempt is still told,
// and so is one whose retry comes after the other order's call.
func TestAnotherItemFromTheSameLineIsNoRetry(t *testing.T) {
	for _, c := range []struct {
		name     string
		freshKey bool // a retry keyed by a new random key, not the order's id
		retry    bool
	}{
		{name: "each order's line once, moving on after a failure"},
		{name: "each order's line retried under its key", retry: true},
		{name: "retried under a fresh key", freshKey: true, retry: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			op := &Op{Name: "add_line", Kind: KindWrite, Params: []string{"order", "sku", "qty"}}
			var (
				mu     sync.Mutex
				lines  map[string]int
				orders [2]struct{ id, sku string } // named by the sink afresh for each scenario's world
			)
			add := func(ctx context.Context, key, order, sku string) error {
				return traced(ctx, op, []any{order, sku, 2}, []any{key, sku}, func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					lines[order+"/"+sku] = 2 // an upsert on (order, sku)
					return nil
				})
			}
			agent := func(ctx context.Context) error {
				for _, o := range orders {
					attempts := 1
					if c.retry {
						attempts = 3
					}
					for range attempts {
						key := o.id
						if c.freshKey {
							key = randomID()
						}
						err := add(ctx, key, o.id, o.sku)
						if err == nil || ctx.Err() != nil {
							break
						}
					}
				}
				return nil
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error {
					lines = map[string]int{}
					orders[0].id, orders[0].sku = randomID(), "apple"
					orders[1].id, orders[1].sku = randomID(), "pear"
					return nil
				}))
			require.NoError(t, err)
			var unstable []string
			for _, f := range rep.Findings {
				if f.Code == CodeIdentityUnstable {
					unstable = append(unstable, f.Scenario+": "+f.Message)
				}
			}
			if c.freshKey {
				assert.NotEmpty(t, unstable, "a retry under a fresh key passed")
				return
			}
			assert.Empty(t, unstable, "the other order's line taken for a retry")
		})
	}
}
