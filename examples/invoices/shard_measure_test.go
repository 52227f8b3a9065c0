package invoices

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// TestMeasureShard measures one shard of a sharded exploration for
// scripts/bench/shards.sh: the 2520 schedules of four dependent calls, of
// which this process runs the part AGENTIDEM_SHARD names (all of them
// without it). It asserts nothing about time and is skipped unless
// AGENTIDEM_MEASURE_SHARD=1; it logs one "measure:" line.
func TestMeasureShard(t *testing.T) {
	if os.Getenv("AGENTIDEM_MEASURE_SHARD") == "" {
		t.Skip("set AGENTIDEM_MEASURE_SHARD=1 (scripts/bench/shards.sh does) to measure a shard")
	}
	var b *Billing
	four := func(ctx context.Context) error {
		var calls []func() error
		for i := 0; i < 4; i++ {
			calls = append(calls, func() error { return b.ApplyCreditTraced(ctx, "INV-1", i+1) })
		}
		return errors.Join(parallel(calls...)...)
	}
	start := time.Now()
	rep := testkit.Run(t, four, setup(&b), testkit.NoSummary())
	wall := time.Since(start)
	n := 0
	for _, r := range rep.Results {
		if r.Kind == runtime.ScenarioInterleaving {
			n++
		}
	}
	part := "1/1"
	if rep.Shard != nil {
		part = rep.Shard.String()
	}
	t.Logf("measure: shard|%s|%d|%.3f", part, n, wall.Seconds())
}
