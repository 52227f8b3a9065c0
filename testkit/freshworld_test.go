package testkit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pollers is a job queue's client as River's (riverqueue, on SQLite) is:
// loops that wake every few milliseconds and, for each wait, start a
// goroutine of their own parked on a timer (River's DebouncedChan starts
// one per fetch, its SQLite listener one per poll; FetchPollInterval 5 ms).
// Its code is in this package, which the harness takes for a program's
// own, as it takes River's.
type pollers struct {
	stop chan struct{}
	wg   sync.WaitGroup
}

func startPollers(loops int, every time.Duration) *pollers {
	p := &pollers{stop: make(chan struct{})}
	for range loops {
		p.wg.Go(func() { p.loop(every) })
	}
	return p
}

func (p *pollers) loop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		p.wg.Go(p.debounce) // the loop's own count keeps the group open
	}
}

// debounce is the goroutine of one wait, parked on its timer.
func (p *pollers) debounce() {
	t := time.NewTimer(3 * time.Millisecond)
	defer t.Stop()
	select {
	case <-p.stop:
	case <-t.C:
	}
}

func (p *pollers) Stop() {
	close(p.stop)
	p.wg.Wait()
}

// refundLedger is the sink: the fixed twin refunds an order once however
// often it is asked, the buggy one books a refund per call.
type refundLedger struct {
	mu    sync.Mutex
	count map[string]int
	once  bool
}

var freshRefund = &runtime.Op{Name: "refund", Kind: runtime.KindWrite, Params: []string{"order"}}

func (l *refundLedger) refund(ctx context.Context, order string) error {
	args := []any{order}
	c, _ := runtime.Begin(ctx, freshRefund, args, args, nil)
	if err := c.Start(); err != nil {
		return err
	}
	l.mu.Lock()
	if !l.once || l.count[order] == 0 {
		l.count[order]++
	}
	l.mu.Unlock()
	return c.Finish(nil)
}

func (l *refundLedger) state() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, v := range l.count {
		out[k] = v
	}
	return out
}

// A world whose background loops start a goroutine per wait (a job
// queue's client, River's) left the scenario never quiet: each new
// goroutine, parked in a select of code that is no library the harness
// knows, counted as busy for parkedGrace from when it was first seen, and
// a new one came every few milliseconds, so that the baseline's first call
// waited at its start gate until the stall bound and the test read
// BASELINE FAILED. With River, 3 of 10 runs of a red team's (rtN F9),
// when the clients of earlier tests were still running. Here the two
// cases of Setup's client stalled before the fix in 5 runs of 5 each
// (-count=5); those of a client an earlier test left running did not
// stall (River's did when its goroutines kept the CPUs busy as well), and
// guard that it gets its verdict too. A goroutine of the world (Setup's,
// or one older than the scenario that makes no call) now costs that grace
// once per place it parks at, and the world's busy goroutines hold a
// round for bodyGrace at most: the verdict is the agent's, the buggy
// ledger UNSAFE, the fixed one SAFE.
func TestFreshWorldTimersDoNotStallTheBaseline(t *testing.T) {
	for _, c := range []struct {
		name         string
		bySetup      bool // the client is Setup's; else one an earlier test left running
		once, unsafe bool
	}{
		{"Setup's client, buggy ledger", true, false, true},
		{"Setup's client, fixed ledger", true, true, false},
		{"a client left running, buggy ledger", false, false, true},
		{"a client left running, fixed ledger", false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !c.bySetup {
				left := startPollers(8, 2*time.Millisecond)
				t.Cleanup(left.Stop)
			}
			var (
				l  *refundLedger
				pl *pollers
			)
			t.Cleanup(func() {
				if pl != nil {
					pl.Stop()
				}
			})
			agent := func(ctx context.Context) error {
				if err := l.refund(ctx, "o1"); err != nil {
					return l.refund(ctx, "o1")
				}
				return nil
			}
			began := time.Now()
			rep := testkit.Run(t, agent, testkit.NoSummary(),
				testkit.Setup(func(context.Context) error {
					l = &refundLedger{count: map[string]int{}, once: c.once}
					if c.bySetup {
						if pl != nil {
							pl.Stop() // the last scenario's is left running, as rtN's was
						}
						pl = startPollers(8, 2*time.Millisecond)
					}
					return nil
				}),
				testkit.State(func() any { return l.state() }),
				testkit.StallTimeout(2*time.Second))
			require.False(t, rep.Has(runtime.CodeStalled), "stalled after %s: %v", time.Since(began), rep.Findings)
			require.True(t, rep.BaselineSucceeded, "%v", rep.Findings)
			assert.Equal(t, c.unsafe, !rep.Safe, "%v", rep.Findings)
			assert.Equal(t, c.unsafe, rep.Has(runtime.CodeDuplicateWrite), "%v", rep.Findings)
		})
	}
}

// A scenario that never goes quiet still stalls, in bounded time, and the
// stall says what the gate waits for and which goroutine kept it from
// coming: here one of the agent's own, spinning beside its call. Before,
// the message named the call at its start gate and the goroutines blocked
// meanwhile (River's thirty idle timer loops), not the busy one.
func TestStallNamesWhatTheGateWaitsFor(t *testing.T) {
	l := &refundLedger{count: map[string]int{}}
	var spins atomic.Int64
	agent := func(ctx context.Context) error {
		go spinUntil(ctx, &spins)
		return l.refund(ctx, "o1")
	}
	rep := testkit.Run(t, agent, testkit.NoSummary(), testkit.StallTimeout(300*time.Millisecond))
	require.True(t, rep.Has(runtime.CodeStalled), "%v", rep.Findings)
	var msg string
	for _, f := range rep.Findings {
		if f.Code == runtime.CodeStalled {
			msg = f.Message
		}
	}
	assert.Contains(t, msg, "refund of delivery 1 waits at its start gate for the scenario to go quiet")
	assert.Regexp(t, `at the last look goroutine \d+ \((running|runnable)\) at freshworld_test\.go:\d+ was still busy`, msg)
	assert.Positive(t, spins.Load())
}

// spinUntil stays running until ctx ends.
func spinUntil(ctx context.Context, n *atomic.Int64) {
	for ctx.Err() == nil {
		n.Add(1)
		_ = fmt.Sprint(n.Load()) // work, not a wait
	}
}
