package sqlite_test

import (
	"context"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

var (
	setPairOp    = &runtime.Op{Name: "setPair", Kind: runtime.KindWrite, Params: []string{"sku", "n"}}
	adjustPairOp = &runtime.Op{Name: "adjustPair", Kind: runtime.KindWrite, Params: []string{"sku", "n"}}
)

// setPair is SetLevel traced with identity (sku, n): setting another
// level is another effect.
func setPair(ctx context.Context, set func(context.Context, string, int) error, sku string, n int) (err error) {
	if !runtime.Enabled() {
		return set(ctx, sku, n)
	}
	c, cctx := runtime.Begin(ctx, setPairOp, []any{sku, n}, []any{sku, n}, nil)
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	err = set(cctx, sku, n)
	if lost := c.Finish(err); lost != nil {
		return lost
	}
	return err
}

// An agent that sets a level, another, and the first again (5, 7, 5;
// UPDATE SET qty = n, a repeat changes nothing) was found safe on the
// runs where the calls of duplicate_delivery/concurrent did not overlap in
// time, and a duplicate_write (wholeNote: "cannot tell whether the repeat
// did it again or set back what a later write changed; it counts") on the
// runs where they did: about half (helper-44's report). The third set is
// a set back in the baseline itself, and a repeat that does what it did
// there, from where it did it, is now judged as a set back is, by the
// run's end: the end is one delivery's (a=5), and every run is safe.
func TestSetBackAfterConcurrentDeliveryIsOneVerdict(t *testing.T) {
	w := openStock(t)
	agent := func(ctx context.Context) error {
		for _, n := range []int{5, 7, 5} {
			if err := setPair(ctx, w.SetLevel, "a", n); err != nil {
				if err := setPair(ctx, w.SetLevel, "a", n); err != nil {
					return err
				}
			}
		}
		return nil
	}
	stockVerdicts(t, 6, agent, stockOptions(w, "a"), "")
}

// traced runs f as a traced write of op with identity args.
func traced(ctx context.Context, op *runtime.Op, args []any, f func(context.Context) error) (err error) {
	if !runtime.Enabled() {
		return f(ctx)
	}
	c, cctx := runtime.Begin(ctx, op, args, args, nil)
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	err = f(cctx)
	if lost := c.Finish(err); lost != nil {
		return lost
	}
	return err
}

// Adjusted by 5, 7 and 5 again (qty = qty + n, identity (sku, n)), the
// third call is no set back of the first, in the baseline or anywhere:
// duplicate_delivery/concurrent adds every delta twice and is caught on
// every run, as the other redeliveries are.
func TestAdjustBackAfterConcurrentDeliveryIsCaught(t *testing.T) {
	w := openStock(t)
	agent := func(ctx context.Context) error {
		for _, n := range []int{5, 7, 5} {
			err := traced(ctx, adjustPairOp, []any{"a", n}, func(ctx context.Context) error { return w.Adjust(ctx, "a", n) })
			if err != nil {
				return err
			}
		}
		return nil
	}
	stockVerdicts(t, 6, agent, stockOptions(w, "a"), "duplicate_write")
}
