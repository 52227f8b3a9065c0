package sqlite_test

import (
	"context"
	"testing"
)

// Two tickets opened in one turn, in parallel, with INSERT ... ON CONFLICT
// DO NOTHING (a repeat changes nothing). State reads the tables without
// ORDER BY: rows in the order they were inserted, which two deliveries at
// once may make another than one delivery's.
func TestStateWithoutOrderByAfterTwoDeliveriesAtOnceIsSafe(t *testing.T) {
	d := openDesk(t)
	agent := func(ctx context.Context) error {
		return parallel(
			func() error { return d.OpenTraced(ctx, "t1") },
			func() error { return d.OpenTraced(ctx, "t2") },
		)
	}
	deskSuite(t, d, agent, false)
}
