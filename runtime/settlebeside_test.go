package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lateLedger answers a credit at once and books it 1.5 s later, once per
// key, as a payments API that answers 202 does.
type lateLedger struct {
	mu      sync.Mutex
	seen    map[string]bool
	booked  []string
	pending int
}

func (l *lateLedger) credit(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[key] {
		return
	}
	l.seen[key] = true
	l.pending++
	time.AfterFunc(1500*time.Millisecond, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.booked = append(l.booked, key)
		l.pending--
	})
}

// A Settle that polls for the bookings, around a repeat of the second
// delivery, waited on a timer for longer than the lockstep waits for a
// delivery's tool body: it was taken for the agent's body waiting on a
// timer, the first delivery went on alone, and the correct agent's
// concurrent delivery was inconclusive in 8 runs of 11, its note blaming
// the agent's tool (red team rR #7). The suite's own Settle is waited for.
func TestTheSuitesOwnSettleIsNoBodyWaitingOnATimer(t *testing.T) {
	creditOp := &runtime.Op{Name: "credit", Kind: runtime.KindWrite, Params: []string{"acct"}}
	var l *lateLedger
	agent := func(ctx context.Context) error {
		for _, acct := range []string{"a1", "a2"} {
			call := func() error { return tracedErr(ctx, creditOp, acct, func() error { l.credit(acct); return nil }) }
			if err := call(); err != nil {
				if err := call(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	rep, err := runtime.Run(context.Background(), t.Name(), agent,
		runtime.OnlyScenario(runtime.ScenarioDuplicateConcurrent),
		runtime.Setup(func(context.Context) error { l = &lateLedger{seen: map[string]bool{}}; return nil }),
		runtime.Settle(func(ctx context.Context) error {
			deadline := time.After(5 * time.Second)
			for {
				l.mu.Lock()
				n := l.pending
				l.mu.Unlock()
				if n == 0 {
					return nil
				}
				select {
				case <-time.After(20 * time.Millisecond):
				case <-deadline:
					return errors.New("bookings still pending")
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}),
		runtime.State(func() any {
			l.mu.Lock()
			defer l.mu.Unlock()
			return strings.Join(l.booked, ",")
		}))
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	assert.False(t, r.Inconclusive, "%q", r.Trace.Notes)
	assert.Empty(t, r.Findings)
	for _, n := range r.Trace.Notes {
		assert.NotContains(t, n, "went on alone")
	}
}
