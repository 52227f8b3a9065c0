package sqlite_test

import (
	"context"
	"os"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

var setPairOp = &runtime.Op{Name: "setPair", Kind: runtime.KindWrite, Params: []string{"sku", "n"}}

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

// A known verdict that changes from run to run, skipped unless
// AGENTIDEM_KNOWN_BUGS is set: an agent that sets a level, another, and
// the first again (5, 7, 5; UPDATE SET qty = n, a repeat changes nothing)
// is found safe on the runs where the calls of duplicate_delivery/concurrent
// did not overlap in time, and a duplicate_write (wholeNote: "cannot tell
// whether the repeat did it again or set back what a later write changed;
// it counts") on the runs where they did: about half.
func TestSetBackAfterConcurrentDeliveryIsOneVerdict(t *testing.T) {
	if os.Getenv("AGENTIDEM_KNOWN_BUGS") == "" {
		t.Skip("known verdict that changes run to run (helper-44's report); set AGENTIDEM_KNOWN_BUGS=1 to run")
	}
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
