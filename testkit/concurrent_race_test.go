package testkit_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"golang.org/x/sync/errgroup"
)

// rows is a table without a unique constraint: create checks for the row,
// then inserts it a round trip later (racy), or both under one lock.
type rows struct {
	mu   sync.Mutex
	keys []string
}

var createRowOp = &runtime.Op{Name: "create_row", Kind: runtime.KindWrite, Params: []string{"key"}}

func (r *rows) create(ctx context.Context, key string, racy bool) error {
	return tracedCall(ctx, createRowOp, []any{key}, []any{key}, nil, func(context.Context) error {
		r.mu.Lock()
		exists := slices.Contains(r.keys, key)
		if racy {
			r.mu.Unlock()
			time.Sleep(2 * time.Millisecond) // the INSERT's round trip
			r.mu.Lock()
		}
		if !exists {
			r.keys = append(r.keys, key)
		}
		r.mu.Unlock()
		return nil
	})
}

func (r *rows) snapshot() any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.keys))
}

// A check-then-insert race inside one tool, in an agent that makes two such
// calls in parallel, is caught in duplicate_delivery/concurrent on every
// run, and the atomic create passes. That scenario runs such an agent under
// the listed schedule, which releases the same call of both deliveries at
// once, as the lockstep does, so their bodies overlap. Released one by one,
// each body ran to its end before its twin began: the race was found in 0
// of 30 runs.
func TestRaceInsideAToolOfAParallelAgentIsCaught(t *testing.T) {
	for _, racy := range []bool{true, false} {
		var r *rows
		agent := func(ctx context.Context) error {
			g, gctx := errgroup.WithContext(ctx)
			for _, key := range []string{"k0", "k1"} {
				g.Go(func() error { return r.create(gctx, key, racy) })
			}
			return g.Wait()
		}
		for i := range 10 {
			rep := testkit.Run(&fakeT{name: "TestRace"}, agent, testkit.NoSummary(),
				testkit.Setup(func(context.Context) error { r = &rows{}; return nil }),
				testkit.State(func() any { return r.snapshot() }))
			caught := false
			for _, f := range rep.Findings {
				caught = caught || f.Code == runtime.CodeDuplicateWrite && f.Scenario == runtime.ScenarioDuplicateConcurrent
			}
			if racy {
				assert.True(t, caught, "suite %d: the race inside create_row was not caught: %v", i, rep.Findings)
			} else {
				assert.True(t, rep.Safe && rep.InconclusiveCount == 0, "suite %d: the atomic create: %v", i, rep.Findings)
			}
		}
	}
}
