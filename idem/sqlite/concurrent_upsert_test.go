package sqlite_test

import (
	"context"
	"testing"
)

// Two tickets opened in one turn, in parallel: read, and if missing,
// INSERT ... ON CONFLICT (id) DO UPDATE SET status = excluded.status
// (declared idempotent: a repeat with the same status changes nothing).
// State reads the tables ORDER BY.
func TestParallelUpsertsDeliveredTwiceAreSafe(t *testing.T) {
	d := openDesk(t)
	agent := func(ctx context.Context) error {
		return parallel(
			func() error { return openIfMissing(ctx, d, "t1") },
			func() error { return openIfMissing(ctx, d, "t2") },
		)
	}
	deskSuite(t, d, agent, true)
}
