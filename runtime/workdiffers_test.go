package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An agent that opens two orders (create_order answers each order's id,
// random, as a sink hands them out) and adds one line to each, from one
// line of its code, keyed by the order's id and the item, with the same
// quantity: the second order's call, after the first failed, is other
// work (every part of its identity differs: an id the sink answered, an
// item the baseline's calls held too), not a retry under a fresh key. The
// red team's agent (/tmp/rt29 s1 TestServerID) ran the two in goroutines
// of an errgroup, so the other order's call came between a failed call
// and its retry; here the agent moves on after a failure, or retries
// after the other order's call, so it always does. It was
// identity_unstable (an error) in every fault scenario of the first call.
//
// Retries that change one part of the identity are still told (second red
// team, /tmp/rt30 p1 to p3, which a first version of the rule missed): a
// fresh key per attempt, a counter's next key (req-2, the pear's in the
// baseline), a failover to the other order's provider.
func TestAnotherItemFromTheSameLineIsNoRetry(t *testing.T) {
	for _, c := range []struct {
		name  string
		key   string // "order": the order's id; "fresh": a random key per attempt; "counter": req-N; "failover"
		retry bool
		buggy bool
	}{
		{name: "each order's line once, moving on after a failure", key: "order"},
		{name: "each order's line retried under its key", key: "order", retry: true},
		{name: "retried under a fresh key", key: "fresh", retry: true, buggy: true},
		{name: "retried under a counter's next key", key: "counter", retry: true, buggy: true},
		{name: "retried through the other provider", key: "failover", retry: true, buggy: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			create := &Op{Name: "create_order", Kind: KindWrite, Params: []string{"ref"}}
			add := &Op{Name: "add_line", Kind: KindWrite, Params: []string{"order", "sku", "qty"}}
			var (
				mu     sync.Mutex
				orders map[string]string // ref -> id
				lines  map[string]int
			)
			createOrder := func(ctx context.Context, ref string) (string, error) {
				c, _ := Begin(ctx, create, []any{ref}, []any{ref}, nil)
				if err := c.Start(); err != nil {
					return "", err
				}
				mu.Lock()
				id := orders[ref]
				if id == "" {
					id = randomID()
					orders[ref] = id
				}
				mu.Unlock()
				return id, c.Finish(nil, id) // the sink answers the order's id
			}
			addLine := func(ctx context.Context, key []any, order, sku string) error {
				return traced(ctx, add, []any{order, sku, 2}, key, func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					lines[fmt.Sprint(key...)]++
					return nil
				})
			}
			agent := func(ctx context.Context) error {
				items := []struct{ ref, sku, provider string }{{"web-1", "apple", "stripe"}, {"web-2", "pear", "adyen"}}
				ids := make([]string, len(items))
				for i, it := range items {
					id, err := createOrder(ctx, it.ref)
					if err != nil {
						return err
					}
					ids[i] = id
				}
				req := 0
				for i, it := range items {
					attempts := 1
					if c.retry {
						attempts = 2
					}
					for n := range attempts {
						var key []any
						switch c.key {
						case "order":
							key = []any{ids[i], it.sku}
						case "fresh":
							key = []any{randomID(), it.sku}
						case "counter":
							req++
							key = []any{it.sku, fmt.Sprintf("req-%d", req)}
						case "failover":
							p := items[(i+n)%len(items)].provider
							key = []any{p, p + ":" + it.ref}
						}
						err := addLine(ctx, key, ids[i], it.sku)
						if err == nil || ctx.Err() != nil {
							break
						}
					}
				}
				return nil
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error {
					orders, lines = map[string]string{}, map[string]int{}
					return nil
				}))
			require.NoError(t, err)
			var unstable []string
			for _, f := range rep.Findings {
				if f.Code == CodeIdentityUnstable && f.Severity == SeverityError {
					unstable = append(unstable, f.Scenario+": "+f.Message)
				}
			}
			if c.buggy {
				assert.NotEmpty(t, unstable, "a retry under another key passed")
				return
			}
			assert.Empty(t, unstable, "the other order's line taken for a retry")
		})
	}
}
