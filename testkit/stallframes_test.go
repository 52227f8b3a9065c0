package testkit_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A desk the polling agent reads; snapshotDesk is the helper where a stack
// dump usually catches the loop.
type pollDesk struct {
	mu      sync.Mutex
	refunds []string
}

func (d *pollDesk) snapshotDesk() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string{}, d.refunds...)
}

var pollRefundOp = &runtime.Op{Name: "poll_refund", Kind: runtime.KindWrite, Params: []string{"order"}}

// pollForRefund busy-polls the desk for a refund that a lost request never
// booked, until it is cancelled.
func pollForRefund(ctx context.Context, d *pollDesk) error {
	_ = tracedOp(ctx, pollRefundOp, []any{"o-5"}, func(context.Context) error {
		d.mu.Lock()
		d.refunds = append(d.refunds, "o-5")
		d.mu.Unlock()
		return nil
	})
	for {
		if len(d.snapshotDesk()) > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
	}
}

// A busy loop's stall names the frames of the test's code up to the loop,
// not only the helper the dump caught it in (red team rtV #15: "is running
// at server.go:31", inside the fake's Snapshot, said nothing of the loop);
// the agent, which watched its context, returned once cancelled.
func TestABusyLoopsStallNamesTheLoop(t *testing.T) {
	var d *pollDesk
	rep, err := runtime.Run(context.Background(), t.Name(), func(ctx context.Context) error { return pollForRefund(ctx, d) },
		runtime.Setup(func(context.Context) error { d = &pollDesk{}; return nil }),
		runtime.StallTimeout(time.Second), runtime.OnlyScenario("lost_request/poll_refund#1"))
	require.NoError(t, err)
	var msg string
	var res *runtime.Result
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			if f.Code == runtime.CodeStalled {
				msg, res = f.Message, r
			}
		}
	}
	t.Log(msg)
	require.NotEmpty(t, msg)
	// The dump catches the loop in the helper, or in the loop itself.
	assert.Regexp(t, `is (running|runnable|preempted) at stallframes_test\.go:[0-9]+ in ((\(\*pollDesk\)\.snapshotDesk|[^ ]+), called from stallframes_test\.go:[0-9]+ in )?pollForRefund, called from stallframes_test\.go:[0-9]+ in TestABusyLoopsStallNamesTheLoop`, msg)
	assert.Equal(t, "cancelled", res.Returned())
	assert.False(t, strings.Contains(msg, "decided after"), "a running loop is never a proven deadlock")
}
