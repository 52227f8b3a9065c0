package runtime

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// creditQueue is a queue of credit jobs, keyed by message, that a worker
// Setup starts drains on a ticker: it credits the account and marks the
// job done, or, in the buggy world, deletes the job's row, and with it the
// key the enqueue deduplicates by.
type creditQueue struct {
	deleteDone bool
	mu         sync.Mutex
	jobs       map[string]bool // message → done
	balance    int
}

// enqueue queues a credit for msg, once per message while its job is kept.
func (q *creditQueue) enqueue(msg string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.jobs[msg]; !ok {
		q.jobs[msg] = false
	}
}

// work credits each pending job.
func (q *creditQueue) work() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for msg, done := range q.jobs {
		if done {
			continue
		}
		q.balance += 40
		if q.deleteDone {
			delete(q.jobs, msg)
		} else {
			q.jobs[msg] = true
		}
	}
}

// A redelivery comes later, once the world carried out what the first
// delivery queued: a worker that deletes a done job's row lets a keyed
// enqueue queue the credit again, and the account is credited twice.
// Delivered at once, the second delivery found the job still pending and
// the buggy world passed on most runs (red team rW #1, SAFE 8 to 10 runs
// of 10). The worker that keeps its done jobs is safe.
func TestARedeliveryComesAfterTheWorldsWork(t *testing.T) {
	enqueueOp := &Op{Name: "enqueue", Kind: KindWrite, Params: []string{"msg"}}
	for _, deleteDone := range []bool{true, false} {
		q := &creditQueue{deleteDone: deleteDone}
		var stop chan struct{}
		var done sync.WaitGroup
		agent := func(ctx context.Context) error {
			return traced(ctx, enqueueOp, []any{"msg-9"}, []any{"msg-9"}, func(context.Context) error {
				q.enqueue("msg-9")
				return nil
			})
		}
		rep, err := Run(context.Background(), t.Name(), agent,
			Setup(func(context.Context) error {
				if stop != nil {
					close(stop)
					done.Wait()
				}
				q.mu.Lock()
				q.jobs, q.balance = map[string]bool{}, 0
				q.mu.Unlock()
				stop = make(chan struct{})
				done.Add(1)
				go func(stop chan struct{}) {
					defer done.Done()
					tick := time.NewTicker(20 * time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
							q.work()
						}
					}
				}(stop)
				return nil
			}),
			State(func() any {
				q.mu.Lock()
				defer q.mu.Unlock()
				jobs := make([]string, 0, len(q.jobs))
				for msg := range q.jobs {
					jobs = append(jobs, msg)
				}
				slices.Sort(jobs)
				return map[string]any{"balance": q.balance, "jobs": jobs}
			}))
		close(stop)
		done.Wait()
		require.NoError(t, err)
		if deleteDone {
			for _, sc := range []string{ScenarioDuplicateSeq, "crash_restart/enqueue#1"} {
				assert.Contains(t, findings(rep, sc), CodeDuplicateWrite+" enqueue", "the buggy world's %s credited twice", sc)
			}
			continue
		}
		for _, r := range rep.Results {
			assert.Empty(t, r.Findings, "the correct world's %s: %q", r.Scenario, r.Trace.Notes)
			assert.False(t, r.Inconclusive, "the correct world's %s: %q", r.Scenario, r.Trace.Notes)
		}
	}
}
