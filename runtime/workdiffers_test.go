package runtime

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
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
//
// The same holds where the agent makes each order's id itself and gives it
// to create_order (/tmp/rt29 s1 TestClientID, identity_unstable on every
// run): the other order's id was sent by an earlier write, not answered.
// There the two lines run in goroutines of one closure, as errgroup's Go in
// a loop does, and the scenarios make the orders the other way round from
// the baseline, so that the run's ids do not pair with the baseline's by
// their place (rename.go). A retry under a fresh order id and item, both
// new to the run, is still told.
func TestAnotherItemFromTheSameLineIsNoRetry(t *testing.T) {
	for _, c := range []struct {
		name   string
		key    string // "order": the order's id; "fresh": a random key per attempt; "counter": req-N; "failover"
		retry  bool
		buggy  bool
		client bool // the agent makes the order's id and sends it to create_order
	}{
		{name: "each order's line once, moving on after a failure", key: "order"},
		{name: "each order's line retried under its key", key: "order", retry: true},
		{name: "retried under a fresh key", key: "fresh", retry: true, buggy: true},
		{name: "retried under a counter's next key", key: "counter", retry: true, buggy: true},
		{name: "retried through the other provider", key: "failover", retry: true, buggy: true},
		// The agent makes each order's id and gives it to create_order:
		// the other order's id was sent by an earlier write, not answered
		// (/tmp/rt29 s1 TestClientID: identity_unstable on every run).
		{name: "each order's line once, ids the agent made", key: "order", client: true},
		{name: "each order's line retried, ids the agent made", key: "order", client: true, retry: true},
		// A fresh order id and another item on the retry: both values are
		// new to the run, whatever an earlier write sent.
		{name: "retried under a fresh order id and item, ids the agent made", key: "fresh-all", client: true, retry: true, buggy: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			create := &Op{Name: "create_order", Kind: KindWrite, Params: []string{"ref"}}
			createID := &Op{Name: "create_order", Kind: KindWrite, Params: []string{"id", "ref"}}
			add := &Op{Name: "add_line", Kind: KindWrite, Params: []string{"order", "sku", "qty"}}
			var (
				mu     sync.Mutex
				orders map[string]string // ref -> id
				lines  map[string]int
				flip   bool // set by Setup: the scenarios make the orders the other way round from the baseline
				setups int
			)
			createOrder := func(ctx context.Context, ref string) (string, error) {
				if c.client {
					// A random id per call, as the red team's agent made
					// them; the sink refuses a second order for a ref.
					var b [16]byte
					crand.Read(b[:])
					id := hex.EncodeToString(b[:])
					err := traced(ctx, createID, []any{id, ref}, []any{id}, func(context.Context) error {
						mu.Lock()
						defer mu.Unlock()
						if had, ok := orders[ref]; ok && had != id {
							return fmt.Errorf("order %s exists", ref)
						}
						orders[ref] = id
						return nil
					})
					return id, err
				}
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
				for n := range items {
					i := n
					if c.client && flip {
						// The orders made in the other order, as two
						// goroutines may (the red team's made them at
						// once): the sink's names of this run do not pair
						// with the baseline's by their place.
						i = len(items) - 1 - n
					}
					id, err := createOrder(ctx, items[i].ref)
					if err != nil {
						return err
					}
					ids[i] = id
				}
				req := 0
				line := func(i int, between func()) {
					it := items[i]
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
						case "fresh-all":
							key = []any{ids[i], it.sku}
							if n > 0 {
								key = []any{randomID(), it.sku + "-retry"}
							}
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
						between()
					}
				}
				if !c.client {
					for i := range items {
						line(i, func() {})
					}
					return nil
				}
				// As the red team's agent did, each order's line in a
				// goroutine of its own, the second order's between the
				// first's failed call and its retry; after a crash, the
				// second's call is the crashed invocation's next, not
				// executed.
				var wg sync.WaitGroup
				first, second := make(chan struct{}), make(chan struct{})
				var once sync.Once
				for i := range items {
					wg.Add(1)
					go func() { // one closure for both, as errgroup's Go in a loop
						defer wg.Done()
						between := func() {}
						if i == 0 {
							defer once.Do(func() { close(first) })
							between = func() {
								once.Do(func() { close(first) })
								<-second
							}
						} else {
							defer close(second)
							<-first
						}
						line(i, between) // one line for both: the same frames
					}()
				}
				wg.Wait()
				return nil
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error {
					orders, lines = map[string]string{}, map[string]int{}
					flip = setups > 0 // the baseline's the one way, every other scenario's the other
					setups++
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

// An agent that names a cart and a payment intent itself, opens and creates
// them, and confirms the cart's intent (identity [cart, intent]). On a
// failed confirm the buggy twin starts checkout over: a new cart and a new
// intent, named, opened and created, and confirmed again, which charges
// the customer twice where the first confirm's answer was lost. Every part
// of the new identity differs, and each new value was sent by a write of
// the run, but by one made after the failed call: that is the retry's own
// work, not another item's (red team, /tmp/rt35 p1 TestCartRestartBug,
// which a first version of otherWork passed as safe). The correct twin
// confirms the same cart and intent again.
func TestARestartUnderNamesItJustMadeIsARetry(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			open := &Op{Name: "open_cart", Kind: KindWrite, Params: []string{"cart"}}
			create := &Op{Name: "create_intent", Kind: KindWrite, Params: []string{"intent"}}
			confirm := &Op{Name: "confirm_cart", Kind: KindWrite, Params: []string{"cart", "intent", "amount"}}
			var (
				mu      sync.Mutex
				carts   map[string]bool
				intents map[string]bool
				charged map[string]int // intent -> amount, charged once per intent
			)
			write := func(ctx context.Context, op *Op, args, identity []any, fn func()) error {
				return lockedWrite(ctx, &mu, op, args, identity, fn)
			}
			retried := func(ctx context.Context, f func() error) (err error) {
				for range 3 {
					if err = f(); err == nil || ctx.Err() != nil {
						return err
					}
				}
				return err
			}
			agent := func(ctx context.Context) error {
				var err error
				for attempt := range 3 {
					cart, intent := "cart-web-1001", "pi-web-1001"
					if restart && attempt > 0 {
						cart, intent = fmt.Sprintf("%s-a%d", cart, attempt), fmt.Sprintf("%s-a%d", intent, attempt)
					}
					// The cart and the intent are retried under their names.
					if err = retried(ctx, func() error { return write(ctx, open, []any{cart}, []any{cart}, func() { carts[cart] = true }) }); err != nil {
						return err
					}
					if err = retried(ctx, func() error {
						return write(ctx, create, []any{intent}, []any{intent}, func() { intents[intent] = true })
					}); err != nil {
						return err
					}
					err = write(ctx, confirm, []any{cart, intent, 4200}, []any{cart, intent}, func() {
						if _, ok := charged[intent]; !ok {
							charged[intent] = 4200
						}
					})
					if err == nil || ctx.Err() != nil {
						return err
					}
				}
				return err
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					carts, intents, charged = map[string]bool{}, map[string]bool{}, map[string]int{}
					return nil
				}),
				State(func() any {
					mu.Lock()
					defer mu.Unlock()
					total := 0
					for _, v := range charged {
						total += v
					}
					return map[string]any{"carts": len(carts), "intents": len(intents), "charged": total}
				}))
			require.NoError(t, err)
			var unstable []string
			for _, f := range rep.Findings {
				if f.Code == CodeIdentityUnstable && f.Severity == SeverityError && slices.Contains(f.Ops, "confirm_cart") {
					unstable = append(unstable, f.Scenario+": "+f.Message)
				}
			}
			if restart {
				assert.NotEmpty(t, unstable, "a checkout started over under new names passed")
				return
			}
			assert.Empty(t, unstable, "a confirm retried under its own names taken for a fresh key")
		})
	}
}

// An agent that first saves the customer's cards and the keys of each
// attempt (writes keyed by the customer and by the order), then charges
// under [key, card], and on a failed charge fails over to the next card
// under the next key: after a lost answer, the customer is charged twice.
// Every part of the new identity was sent by a write before the failed
// charge, in its arguments, not as its key: that is the failover's own
// data, not another item's identity (third red team, /tmp/rt37 r3, which a
// version of otherWork that took any value such a write sent passed as
// safe). The correct twin charges again under the same key and card.
func TestAFailoverToACardSavedBeforeIsARetry(t *testing.T) {
	for _, failover := range []bool{false, true} {
		t.Run(fmt.Sprintf("failover=%v", failover), func(t *testing.T) {
			save := &Op{Name: "update_customer", Kind: KindWrite, Params: []string{"customer", "cards"}}
			plan := &Op{Name: "log_run", Kind: KindWrite, Params: []string{"order", "keys"}}
			charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"key", "card", "amount"}}
			var (
				mu      sync.Mutex
				charged map[string]bool // key -> charged
			)
			write := func(ctx context.Context, op *Op, args, identity []any, fn func()) error {
				return lockedWrite(ctx, &mu, op, args, identity, fn)
			}
			agent := func(ctx context.Context) error {
				cards := []any{"pm_visa_4242", "pm_mc_4444", "pm_amex_0005"}
				keys := []any{"ord-1001/pay-1", "ord-1001/pay-2", "ord-1001/pay-3"}
				if err := write(ctx, save, []any{"cus_77", cards}, []any{"cus_77"}, func() {}); err != nil {
					return err
				}
				if err := write(ctx, plan, []any{"ord-1001", keys}, []any{"ord-1001"}, func() {}); err != nil {
					return err
				}
				var err error
				for attempt := range 3 {
					i := 0
					if failover {
						i = attempt
					}
					key, card := keys[i].(string), cards[i].(string)
					err = write(ctx, charge, []any{key, card, 4200}, []any{key, card}, func() { charged[key] = true })
					if err == nil || ctx.Err() != nil {
						return err
					}
				}
				return err
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					charged = map[string]bool{}
					return nil
				}),
				State(func() any {
					mu.Lock()
					defer mu.Unlock()
					return map[string]any{"charges": len(charged)}
				}))
			require.NoError(t, err)
			var unstable []string
			for _, f := range rep.Findings {
				if f.Code == CodeIdentityUnstable && f.Severity == SeverityError && slices.Contains(f.Ops, "charge") {
					unstable = append(unstable, f.Scenario+": "+f.Message)
				}
			}
			if failover {
				assert.NotEmpty(t, unstable, "a failover to a card saved before passed")
				return
			}
			assert.Empty(t, unstable, "a charge retried under its own key taken for a fresh key")
		})
	}
}

// lockedWrite traces a call of op whose body runs fn under mu.
func lockedWrite(ctx context.Context, mu *sync.Mutex, op *Op, args, identity []any, fn func()) error {
	return traced(ctx, op, args, identity, func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		fn()
		return nil
	})
}
