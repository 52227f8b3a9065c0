package testkit_test

import (
	"context"
	"slices"
	"strings"
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

// Which of the two deliveries' same write is the repeat is the same on
// every run, for an agent with parallel calls (the listed schedule) and a
// serial one (the lockstep), with the tools' bodies still run at once: the
// later delivery's twin reaches the State judge only once the earlier one
// has. Left to the goroutines, which twin was marked absorbed (or
// duplicate, and named so in the finding) changed from run to run: 2
// distinct markings in 10 runs of four parallel creates.
func TestConcurrentDeliveryMarksTheSameRepeatEveryRun(t *testing.T) {
	for _, parallel := range []bool{true, false} {
		for _, racy := range []bool{false, true} {
			var r *rows
			agent := func(ctx context.Context) error {
				keys := []string{"k0", "k1", "k2", "k3"}
				if !parallel {
					for _, key := range keys {
						if err := r.create(ctx, key, racy); err != nil {
							return err
						}
					}
					return nil
				}
				g, gctx := errgroup.WithContext(ctx)
				for _, key := range keys {
					g.Go(func() error { return r.create(gctx, key, racy) })
				}
				return g.Wait()
			}
			seen := map[string]int{}
			for range 20 {
				rep := testkit.Run(&fakeT{name: "TestMarks"}, agent, testkit.NoSummary(),
					testkit.Setup(func(context.Context) error { r = &rows{}; return nil }),
					testkit.State(func() any { return r.snapshot() }),
					testkit.With(runtime.OnlyScenario(runtime.ScenarioDuplicateConcurrent)))
				// Which call is the repeat; with the atomic create, how
				// it was judged too. Whether the racy create's race shows
				// in a run is up to its bodies' timing (absorbed or
				// duplicate), not which twin is the repeat.
				var line []string
				for _, res := range rep.Results {
					for _, o := range res.Trace.Ops {
						mark := o.Repeat
						if racy && mark != "" {
							mark = "repeat"
						}
						line = append(line, o.ID+" "+mark)
					}
					for _, f := range res.Findings {
						if !racy {
							line = append(line, f.Code+": "+f.Message)
						}
					}
				}
				seen[strings.Join(line, "\n")]++
			}
			assert.Len(t, seen, 1, "parallel=%v racy=%v: %v", parallel, racy, seen)
		}
	}
}
