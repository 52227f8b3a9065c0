package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// welcomeQueue is a job queue whose worker Setup starts (red team rtR #8,
// the River-free shape of #4): the agent's traced enqueue puts a user on
// a channel, and the worker mails the user a welcome through the traced
// send_email tool, with context.Background(), as a queue's worker does:
// the job outlives the delivery that queued it, and its context cannot be
// the agent's. keyed sends the mail with an idempotency key derived from
// the user, which the mailer honours (the fixed agent); unkeyed, each job
// mails.
type welcomeQueue struct {
	keyed   bool
	mu      sync.Mutex
	sent    []string
	keys    map[string]bool
	jobs    chan string
	pending atomic.Int64
	done    chan struct{}
}

var (
	opEnqueueWelcome = &Op{Name: "enqueue_welcome", Kind: KindWrite, Params: []string{"user"}}
	opSendEmail      = &Op{Name: "send_email", Kind: KindWrite, Params: []string{"user", "key"}}
)

func (q *welcomeQueue) start() {
	q.mu.Lock()
	q.sent, q.keys = nil, map[string]bool{}
	q.mu.Unlock()
	q.jobs, q.done = make(chan string, 16), make(chan struct{})
	go func() {
		defer close(q.done)
		for u := range q.jobs {
			key := ""
			if q.keyed {
				key = "welcome-" + u
			}
			_ = traced(context.Background(), opSendEmail, []any{u, key}, []any{u}, func(context.Context) error {
				q.mu.Lock()
				defer q.mu.Unlock()
				if key == "" || !q.keys[key] {
					q.keys[key] = true
					q.sent = append(q.sent, u)
				}
				return nil
			})
			q.pending.Add(-1)
		}
	}()
}

func (q *welcomeQueue) stop() { close(q.jobs); <-q.done }

func (q *welcomeQueue) snapshot() any {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := slices.Clone(q.sent)
	slices.Sort(out)
	return out
}

// drained is the Settle: it waits until the worker has taken every job.
func (q *welcomeQueue) drained(ctx context.Context) error {
	for q.pending.Load() != 0 {
		select {
		case <-ctx.Done():
			return errors.New("the queue still had jobs pending")
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// agent enqueues the welcome, and once more when the first enqueue failed
// (the retry a lost acknowledgement gets).
func (q *welcomeQueue) agent(ctx context.Context) error {
	enqueue := func() error {
		return traced(ctx, opEnqueueWelcome, []any{"u-1"}, []any{"u-1"}, func(context.Context) error {
			q.pending.Add(1)
			q.jobs <- "u-1"
			return nil
		})
	}
	if err := enqueue(); err != nil {
		return enqueue()
	}
	return nil
}

func runWelcome(t *testing.T, keyed, state bool) *Report {
	t.Helper()
	q := &welcomeQueue{keyed: keyed}
	opts := []Option{
		Setup(func(context.Context) error { q.start(); return nil }),
		Teardown(func(context.Context) error { q.stop(); return nil }),
	}
	if state {
		opts = append(opts, State(q.snapshot), Settle(func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			return q.drained(ctx)
		}))
	}
	rep, err := Run(context.Background(), t.Name(), q.agent, opts...)
	require.NoError(t, err)
	return rep
}

// The calls a worker that Setup started makes without the agent's context
// are the world's work: before, they were taken for the one delivery
// running, faults were planned on them that the agent "never made", and,
// held at a gate the Settle waited behind, every repeat went unjudged
// until the Settle's bound: the buggy agent passed as inconclusive, the
// correct one was inconclusive in 6 to 8 of 10 scenarios, 12 s a suite,
// with a warning to pass the agent's ctx, which a queue's worker cannot.
// Now the worker's calls run untraced and ungated, State judges the mails,
// and an info says so once.
func TestSetupWorkerCallsAreTheWorlds(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		name := map[bool]string{false: "buggy", true: "fixed"}[keyed]
		t.Run(name, func(t *testing.T) {
			rep := runWelcome(t, keyed, true)
			require.True(t, rep.BaselineSucceeded, rep.BaselineFailure)
			assert.Equal(t, !keyed, rep.UnsafeCount > 0, "unsafe %d", rep.UnsafeCount)
			assert.Equal(t, keyed, rep.Safe)
			assert.Zero(t, rep.InconclusiveCount, "no scenario may be inconclusive")
			assert.False(t, rep.Baseline.Inconclusive)
			for _, res := range append([]*Result{rep.Baseline}, rep.Results...) {
				assert.NotEqual(t, "send_email", res.OperationName, "a fault planned on the world's call: %s", res.Scenario)
				assert.Empty(t, res.Trace.Calls("send_email"), "%s traced the world's call", res.Scenario)
				for _, n := range res.Trace.Notes {
					assert.NotContains(t, n, "did not go quiet", res.Scenario)
				}
			}
			var infos int
			for _, f := range rep.Findings {
				assert.NotContains(t, f.Message, "pass the agent's ctx")
				if f.Code == CodeContextDetached && strings.Contains(f.Message, "by a goroutine that Setup started") {
					infos++
					assert.Equal(t, SeverityInfo, f.Severity)
					assert.Contains(t, f.Message, "send_email was called at setupworker_calls_test.go:")
					assert.Contains(t, f.Message, "State judged what they changed")
				}
				if !keyed && f.Severity == SeverityError {
					assert.Equal(t, CodeDuplicateWrite, f.Code, f.Message)
				}
			}
			assert.Equal(t, 1, infos, "told once a suite")
		})
	}
}

// Without State nothing judges what the worker's calls change: a warning
// says so, and what to give; the agent's own enqueue is still judged by
// its executions.
func TestSetupWorkerCallsWithoutStateWarn(t *testing.T) {
	rep := runWelcome(t, true, false)
	require.True(t, rep.BaselineSucceeded, rep.BaselineFailure)
	var warned bool
	for _, f := range rep.Findings {
		if f.Code == CodeContextDetached && strings.Contains(f.Message, "by a goroutine that Setup started") {
			warned = true
			assert.Equal(t, SeverityWarning, f.Severity)
			assert.Contains(t, f.Message, "give State")
		}
	}
	assert.True(t, warned, "%v", rep.Findings)
	for _, res := range rep.Results {
		assert.NotEqual(t, "send_email", res.OperationName, res.Scenario)
	}
}
