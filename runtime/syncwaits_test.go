package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
	xsem "golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"
)

// Two goroutines of the agent share a semaphore of one: the one that wins
// it charges, then hands its receipt over an unbuffered channel that the
// other reads only once it holds the semaphore, a deadlock (red team rtY
// #6). The stall named the semaphore's Acquire "a select outside the
// agent's code, which may have a timer among their cases" and said a
// longer StallTimeout might help; it waits for a lock. The twin that
// takes the receipt before the semaphore passes.
func TestASemaphoreDeadlockIsToldAsALock(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	for _, correct := range []bool{false, true} {
		t.Run(map[bool]string{false: "receipt read under the semaphore", true: "receipt read first"}[correct], func(t *testing.T) {
			var receipts chan string // the last run's, drained after the suite
			agent := func(ctx context.Context) error {
				sem := xsem.NewWeighted(1)
				receipts = make(chan string)
				receipts := receipts
				g, gctx := errgroup.WithContext(ctx)
				g.Go(func() error {
					if err := sem.Acquire(gctx, 1); err != nil {
						return err
					}
					defer sem.Release(1)
					if err := traced(gctx, charge, []any{"ord-2"}, []any{"ord-2"}, func(context.Context) error { return nil }); err != nil {
						return err
					}
					receipts <- "rcpt-ord-2" // as the red team's agent: a plain send
					return nil
				})
				g.Go(func() error {
					if correct {
						<-receipts
					}
					time.Sleep(time.Millisecond) // the other wins the semaphore
					if err := sem.Acquire(gctx, 1); err != nil {
						return err
					}
					defer sem.Release(1)
					if !correct {
						<-receipts
					}
					return nil
				})
				return g.Wait()
			}
			rep, err := Run(context.Background(), t.Name(), agent, StallTimeout(time.Second), OnlyScenario(ScenarioBaseline))
			require.NoError(t, err)
			if !correct {
				<-receipts // the holder left running in its send returns
			}
			if correct {
				assert.True(t, rep.BaselineSucceeded, "%v", rep.Findings)
				return
			}
			stall := stallOf(rep.Baseline)
			t.Log(stall)
			require.NotEmpty(t, stall)
			assert.Contains(t, stall, "waiting to acquire a golang.org/x/sync/semaphore.Weighted")
			assert.NotContains(t, stall, "timed long poll")
		})
	}
}

// Two deliveries at once whose charge goes through one singleflight.Group
// keyed by the order: the second waits in Group.Do for the first's call
// and shares its result, one execution for both (red team rtY #7). The
// concurrent delivery's note said the deliveries "ran one after the
// other" there, waiting "on a sync.WaitGroup".
func TestASingleflightCollapseIsToldAsShared(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	var sf singleflight.Group
	var mu sync.Mutex
	var charges int
	agent := func(ctx context.Context) error {
		_, err, _ := sf.Do("ord-1", func() (any, error) {
			return nil, traced(ctx, charge, []any{"ord-1"}, []any{"ord-1"}, func(context.Context) error {
				mu.Lock()
				charges++
				mu.Unlock()
				time.Sleep(5 * time.Millisecond) // the other delivery joins the flight
				return nil
			})
		})
		return err
	}
	rep, err := Run(context.Background(), t.Name(), agent, OnlyScenario(ScenarioDuplicateConcurrent),
		Setup(func(context.Context) error { mu.Lock(); charges = 0; mu.Unlock(); return nil }),
		State(func() any { mu.Lock(); defer mu.Unlock(); return charges }))
	require.NoError(t, err)
	var r *Result
	for _, x := range rep.Results {
		if x.Scenario == ScenarioDuplicateConcurrent {
			r = x
		}
	}
	require.NotNil(t, r)
	notes := strings.Join(r.Trace.Notes, "\n")
	t.Log(notes)
	if !strings.Contains(notes, "went on alone") {
		t.Skip("the deliveries did not meet in the flight this run")
	}
	assert.Contains(t, notes, "waiting in singleflight's Group.Do for the call another goroutine made with the same key")
	assert.Contains(t, notes, "shared this one's call there, through singleflight")
	assert.NotContains(t, notes, "ran one after the other")
}
