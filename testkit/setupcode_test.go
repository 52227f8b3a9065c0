package testkit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/sendwindow"
)

var windowSendOp = &runtime.Op{Name: "send_after_window", Kind: runtime.KindWrite, Params: []string{"to"}, Idempotent: true}

// waitForWindow sends, then waits for the send window that Setup built:
// a function of its own, so that the test's, which builds the window, is
// not on its stack.
func waitForWindow(w **sendwindow.Window) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := tracedCall(ctx, windowSendOp, []any{"ada"}, []any{"ada"}, nil, func(context.Context) error { return nil }); err != nil {
			return err
		}
		<-(*w).Ready()
		return nil
	}
}

// testkit.Setup wraps the test's function before the runtime sees it:
// the stall watch reads the test's function, not the wrapper, and sees
// the timer it arms (red team rtX #3's second variant: a correct agent
// waiting 2 s for a window Setup built was called deadlocked after 1.3 s).
func TestATimerArmedInTestkitSetupIsNoDeadlock(t *testing.T) {
	var w *sendwindow.Window
	ft := &fakeT{name: "TestWindow"}
	start := time.Now()
	rep := testkit.Run(ft, waitForWindow(&w), testkit.NoSummary(),
		testkit.With(runtime.StallTimeout(10*time.Second)), testkit.With(runtime.OnlyScenario("lost_request/send_after_window#1")),
		testkit.Setup(func(context.Context) error {
			w = sendwindow.New(2 * time.Second)
			return nil
		}))
	require.NotNil(t, rep.Baseline)
	for _, f := range rep.Baseline.Findings {
		assert.False(t, strings.Contains(f.Message, "stalled"), f.Message)
	}
	assert.True(t, rep.BaselineSucceeded, rep.BaselineFailure)
	assert.GreaterOrEqual(t, time.Since(start), 2*time.Second)
}

// Its twin, whose window never opens, waits for good: the Setup's code is
// read (not the wrapper's, which cannot be), and the stall is decided
// before the bound.
func TestAWaitForAShutWindowIsStillProven(t *testing.T) {
	t.Cleanup(sendwindow.Release)
	var w *sendwindow.Window
	ft := &fakeT{name: "TestShutWindow"}
	start := time.Now()
	rep := testkit.Run(ft, waitForWindow(&w), testkit.NoSummary(),
		testkit.With(runtime.StallTimeout(10*time.Second)), testkit.With(runtime.OnlyScenario("lost_request/send_after_window#1")),
		testkit.Setup(func(context.Context) error {
			w = sendwindow.Shut()
			return nil
		}))
	require.NotNil(t, rep.Baseline)
	assert.False(t, rep.BaselineSucceeded)
	var msg string
	for _, f := range rep.Baseline.Findings {
		if f.Code == runtime.CodeStalled {
			msg = f.Message
		}
	}
	assert.Contains(t, msg, "decided after")
	assert.Less(t, time.Since(start), 6*time.Second, "decided well before the 10 s bound")
}
