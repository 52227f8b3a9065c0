package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/runtime/internal/waitclock"
)

// mailTools are the tools of the reminder agents of red team rtX #2 and
// #3: schedule_mail hands the reminder to a mailer of another package of
// the module, which arms a time.AfterFunc that sends it and closes its
// confirmation; wait_sent waits for that confirmation.
type mailTools struct {
	m     *waitclock.Mailer
	delay time.Duration
}

func (t *mailTools) scheduleMail(_ context.Context, user string) (string, error) {
	return t.m.Schedule(user, t.delay), nil
}

// recordMail is a write whose mailer never sends the mail: it arms
// nothing.
func (t *mailTools) recordMail(_ context.Context, user string) (string, error) {
	return t.m.Record(user), nil
}

func (t *mailTools) waitSent(_ context.Context, id string) error {
	<-t.m.Confirmation(id)
	return nil
}

// notifyNow is a write annotated read: it sends the mail itself.
func (t *mailTools) notifyNow(_ context.Context, user string) error {
	t.m.SendNow(user)
	return nil
}

// posOf is an op's Pos for fn, as generated code writes it: the base
// name of its file and its line.
func posOf(fn any) string {
	f := goruntime.FuncForPC(reflect.ValueOf(fn).Pointer())
	file, line := f.FileLine(f.Entry())
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// The ops are declared as generated code declares them: Declare finds
// the annotated functions beside this file through their Pos.
var (
	scheduleMailOp = Declare(&Op{Name: "schedule_mail", Kind: KindWrite, Params: []string{"user"}, Pos: posOf((*mailTools).scheduleMail)})
	recordMailOp   = Declare(&Op{Name: "record_mail", Kind: KindWrite, Params: []string{"user"}, Pos: posOf((*mailTools).recordMail)})
	waitSentOp     = Declare(&Op{Name: "wait_sent", Kind: KindRead, Params: []string{"id"}, Pos: posOf((*mailTools).waitSent)})
	notifyNowOp    = Declare(&Op{Name: "notify_now", Kind: KindRead, Params: []string{"user"}, Pos: posOf((*mailTools).notifyNow)})
)

// The wrappers, as generated: the traced call runs the annotated function.
func (t *mailTools) scheduleMailTraced(ctx context.Context, user string) (id string, err error) {
	err = traced(ctx, scheduleMailOp, []any{user}, []any{user}, func(ctx context.Context) (err error) {
		id, err = t.scheduleMail(ctx, user)
		return err
	})
	return id, err
}

func (t *mailTools) recordMailTraced(ctx context.Context, user string) (id string, err error) {
	err = traced(ctx, recordMailOp, []any{user}, []any{user}, func(ctx context.Context) (err error) {
		id, err = t.recordMail(ctx, user)
		return err
	})
	return id, err
}

func (t *mailTools) waitSentTraced(ctx context.Context, id string) error {
	return traced(ctx, waitSentOp, []any{id}, nil, func(ctx context.Context) error { return t.waitSent(ctx, id) })
}

func (t *mailTools) notifyNowTraced(ctx context.Context, user string) error {
	return traced(ctx, notifyNowOp, []any{user}, nil, func(ctx context.Context) error { return t.notifyNow(ctx, user) })
}

// waitOutside schedules the mail, then waits for its confirmation in its
// own code, outside any call (rtX #3's AgentWaitsOutside); with record
// set, its twin records a mail that is never sent, and waits for good.
func waitOutside(tools **mailTools, record bool) func(context.Context) error {
	return func(ctx context.Context) error {
		schedule := (*tools).scheduleMailTraced
		if record {
			schedule = (*tools).recordMailTraced
		}
		id, err := schedule(ctx, "ada")
		if err != nil {
			return err
		}
		<-(*tools).m.Confirmation(id)
		return nil
	}
}

// runBaselineStall runs agent's baseline (and lost_request/<op>#1, in
// which the tool does not run) with a stall bound of 10 s, and returns
// the baseline's stall message and how long the suite took.
func runBaselineStall(t *testing.T, op string, agent func(context.Context) error, opts ...Option) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	opts = append([]Option{StallTimeout(10 * time.Second), OnlyScenario("lost_request/" + op + "#1")}, opts...)
	rep, err := Run(context.Background(), t.Name(), agent, opts...)
	require.NoError(t, err)
	require.NotNil(t, rep.Baseline)
	return stallOf(rep.Baseline), time.Since(start)
}

// A correct agent whose traced write armed a 2 s timer, in another
// package of the module, and which then waited on the channel the timer
// closes, in its own code, was called deadlocked after 1.3 s: its
// baseline failed (red team rtX #3). The timer has no goroutine, and the
// function that armed it ran and returned before the wait: the stall
// watch now reads the code of the scenario's calls, and waits.
func TestATimerArmedByAFinishedCallIsNoDeadlock(t *testing.T) {
	var tools *mailTools
	msg, took := runBaselineStall(t, "schedule_mail", waitOutside(&tools, false), Setup(func(context.Context) error {
		tools = &mailTools{m: waitclock.NewMailer(), delay: 2 * time.Second}
		return nil
	}))
	assert.Empty(t, msg, "the timer armed by schedule_mail ends the wait")
	assert.GreaterOrEqual(t, took, 2*time.Second)
}

// Its twin, whose mailer never sends the mail, waits for good, and the
// stall is still decided before the bound, saying what was read.
func TestAWaitNoFinishedCallEndsIsStillProven(t *testing.T) {
	t.Cleanup(waitclock.CloseAll) // the agent left waiting returns (goleak)
	var tools *mailTools
	msg, took := runBaselineStall(t, "record_mail", waitOutside(&tools, true), Setup(func(context.Context) error {
		tools = &mailTools{m: waitclock.NewMailer()}
		return nil
	}))
	require.NotEmpty(t, msg, "the baseline stalled")
	assert.Contains(t, msg, "decided after")
	assert.Contains(t, msg, "no code on their stacks, nor the calls and Setup of the scenario, sets a timer")
	assert.Less(t, took, 6*time.Second, "decided well before the 10 s bound")
}

// waitWindow records a mail, then waits for the send window to open (rtX
// #3's AgentWaitsForWindow), in a function of its own: the test's, which
// builds the window, is not on its stack.
func waitWindow(tools **mailTools, w **waitclock.Window) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, err := (*tools).recordMailTraced(ctx, "ada"); err != nil {
			return err
		}
		<-(*w).Ready()
		return nil
	}
}

// A correct agent that waits for a send window whose timer Setup armed
// (waitclock.NewWindow, in another package of the module; Ready returns
// the channel the timer closes) was called deadlocked too (rtX #3's
// second variant): Setup's code is read as well.
func TestATimerArmedInSetupIsNoDeadlock(t *testing.T) {
	var tools *mailTools
	var w *waitclock.Window
	msg, took := runBaselineStall(t, "record_mail", waitWindow(&tools, &w), Setup(func(context.Context) error {
		tools = &mailTools{m: waitclock.NewMailer()}
		w = waitclock.NewWindow(2 * time.Second)
		return nil
	}))
	assert.Empty(t, msg, "the window's timer, armed in Setup, ends the wait")
	assert.GreaterOrEqual(t, took, 2*time.Second)
}

// The report of a suite whose stall was decided early says so in its
// notes, and the scenario's trace too: the verdict rests on reading code.
func TestAnEarlyStallIsNotedInTheReport(t *testing.T) {
	t.Cleanup(waitclock.CloseAll)
	var tools *mailTools
	rep, err := Run(context.Background(), t.Name(), waitOutside(&tools, true), StallTimeout(10*time.Second), OnlyScenario("lost_request/record_mail#1"),
		Setup(func(context.Context) error { tools = &mailTools{m: waitclock.NewMailer()}; return nil }))
	require.NoError(t, err)
	require.NotEmpty(t, stallOf(rep.Baseline))
	assert.Contains(t, rep.Baseline.Trace.Notes, earlyStallNote)
	require.NotEmpty(t, rep.Notes)
	assert.Contains(t, fmt.Sprint(rep.Notes), "the stall of baseline was decided before StallTimeout by reading code")
}

// readChanged returns the baseline's read_changed_state warnings.
func readChanged(rep *Report) []string {
	var out []string
	for _, f := range rep.Baseline.Findings {
		if f.Code == CodeReadChangedState {
			out = append(out, f.Message)
		}
	}
	return out
}

// A read that waits for the mail the write before it scheduled sees that
// write's timer send it: it was told it changed the world, "the world
// held still before and after it", and the correct agent's suite was
// INCONCLUSIVE (red team rtX #2). A read after a write whose code arms a
// timer is not checked; a read that sends a mail itself, after a write
// that arms nothing, still is.
func TestAReadAfterAWriteThatArmsATimerIsNotBlamed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		op    string
		agent func(t *mailTools) func(context.Context) error
		noted bool
	}{
		{"wait for the scheduled mail", 30 * time.Millisecond, "schedule_mail", func(t *mailTools) func(context.Context) error {
			return func(ctx context.Context) error {
				id, err := t.scheduleMailTraced(ctx, "ada")
				if err != nil {
					return err
				}
				return t.waitSentTraced(ctx, id)
			}
		}, false},
		{"a read that sends, after a write that arms nothing", 0, "record_mail", func(t *mailTools) func(context.Context) error {
			return func(ctx context.Context) error {
				if _, err := t.recordMailTraced(ctx, "ada"); err != nil {
					return err
				}
				return t.notifyNowTraced(ctx, "bob")
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tools *mailTools
			rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error { return tc.agent(tools)(ctx) },
				OnlyScenario("lost_request/"+tc.op+"#1"),
				Setup(func(context.Context) error { tools = &mailTools{m: waitclock.NewMailer(), delay: tc.delay}; return nil }),
				State(func() any { return map[string]any{"sent": tools.m.Sent()} }))
			require.NoError(t, err)
			require.True(t, rep.BaselineSucceeded, rep.BaselineFailure)
			noted := readChanged(rep)
			if !tc.noted {
				assert.Empty(t, noted)
				assert.False(t, rep.Baseline.Inconclusive, "the baseline is conclusive")
				return
			}
			require.Len(t, noted, 1, "%v", rep.Baseline.Findings)
			assert.Contains(t, noted[0], "notify_now is annotated read, but the state changed while its call")
		})
	}
}
