package testkit_test

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// checkout charges a cart: the cart (amount, customer) is the receiver,
// the idempotency key the only argument the call records.
type cart struct {
	mu      sync.Mutex
	amount  int
	charges []string
}

func (c *cart) checkout(ctx context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.charges = append(c.charges, fmt.Sprintf("%s:%d", key, c.amount))
	return nil
}

var checkoutOp = &runtime.Op{Kind: runtime.KindWrite, Name: "checkout", Params: []string{"key"}, Pos: "keyonly_test.go:1"}

func (c *cart) checkoutTraced(ctx context.Context, key string) (err error) {
	args := []any{key}
	call, cctx := runtime.Begin(ctx, checkoutOp, args, args[0:1:1], nil)
	if err = call.Start(); err != nil {
		return
	}
	defer call.Recover(&err)
	err = c.checkout(cctx, key)
	if lost := call.Finish(err); lost != nil {
		return lost
	}
	return
}

// A fresh idempotency key per attempt, on a write whose only recorded
// argument is the key: the retry charges the cart twice.
func TestFreshKeyOnKeyOnlyWriteIsIdentityUnstable(t *testing.T) {
	var c *cart
	agent := func(ctx context.Context) error {
		var err error
		for range 3 {
			key := fmt.Sprintf("ck-%d", rand.Int())
			//agentidem:ignore seeded bug
			if err = c.checkoutTraced(ctx, key); err == nil {
				return nil
			}
		}
		return err
	}
	rep := testkit.Run(&fakeT{name: "TestCheckout"}, agent,
		testkit.Setup(func(context.Context) error { c = &cart{amount: 4200}; return nil }),
		testkit.NoSummary())
	if !rep.Has(runtime.CodeIdentityUnstable) {
		var codes []string
		for _, f := range rep.Findings {
			codes = append(codes, f.Code+" "+f.Scenario)
		}
		t.Errorf("no identity_unstable for a fresh key per attempt (safe=%v): %v", rep.Safe, codes)
	}
}
