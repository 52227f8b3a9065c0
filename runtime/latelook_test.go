package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// timerMailer is a mail service that arms a timer per mail (no goroutine
// until it fires), with a send window a Setup opened: each mail goes out
// lag after the window opens, and the agent returns as it opens.
type timerMailer struct {
	mu     sync.Mutex
	sent   []string
	keys   map[string]bool
	opened chan struct{}
}

// runTimerMailer runs the suite of an agent that schedules a reminder for
// ada (keyed: a repeat returns the one armed; else each call arms one)
// and waits for the window, whose mail lands lag after it opened.
func runTimerMailer(t *testing.T, keyed bool, lag time.Duration) *Report {
	t.Helper()
	schedule := &Op{Name: "schedule_mail", Kind: KindWrite, Params: []string{"user"}}
	const coolDown = 40 * time.Millisecond
	var w *timerMailer
	agent := func(ctx context.Context) error {
		m := w
		err := traced(ctx, schedule, []any{"ada"}, []any{"ada"}, func(context.Context) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			if keyed && m.keys["ada"] {
				return nil
			}
			m.keys["ada"] = true
			time.AfterFunc(coolDown, func() {
				<-m.opened
				time.Sleep(lag)
				m.mu.Lock()
				m.sent = append(m.sent, "ada")
				m.mu.Unlock()
			})
			return nil
		})
		if err != nil {
			return err
		}
		<-m.opened
		return nil
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error {
			m := &timerMailer{keys: map[string]bool{}, opened: make(chan struct{})}
			time.AfterFunc(coolDown, func() { close(m.opened) })
			w = m
			return nil
		}),
		State(func() any {
			w.mu.Lock()
			defer w.mu.Unlock()
			return map[string]any{"sent": append([]string(nil), w.sent...)}
		}))
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded, "%v", rep.Baseline.Findings)
	return rep
}

// A mail that lands a moment after the agent returned, with no goroutine
// of the world's running (a timer's): the baseline's end, read at once
// as nothing had moved, held no mail, and the keyed agent's repeats were
// duplicate_writes (State saw no execution change the world) in the
// scenarios that repeat the schedule, in 1 to 3 runs of 6 with the mail
// 0, 3 or 10 ms after the agent returned (red team rtX's reminder
// agent). The baseline now looks again (lateLook), and a run
// that repeats the write reads its end no sooner than the baseline's
// effect took, again, after its last write (lateWait): the keyed agent
// passes, and the naive agent, whose redelivery arms a second mail
// 40 ms after the first one's, is caught in each such scenario (its
// sequential redelivery was absorbed before: its end was read before
// the second mail).
func TestAMailThatLandsAfterTheAgentReturned(t *testing.T) {
	repeats := []string{ScenarioCrashRestart, ScenarioDuplicateSeq, ScenarioDuplicateConcurrent}
	for _, lag := range []time.Duration{0, 3 * time.Millisecond, 10 * time.Millisecond} {
		t.Run(fmt.Sprintf("keyed/lag=%v", lag), func(t *testing.T) {
			rep := runTimerMailer(t, true, lag)
			for _, r := range rep.Results {
				assert.Empty(t, r.Findings, "%s", r.Scenario)
				assert.True(t, r.Safe, "%s: %v", r.Scenario, r.Trace.Notes)
			}
		})
	}
	for _, lag := range []time.Duration{0, 10 * time.Millisecond} {
		t.Run(fmt.Sprintf("naive/lag=%v", lag), func(t *testing.T) {
			rep := runTimerMailer(t, false, lag)
			seen := map[string]bool{}
			for _, r := range rep.Results {
				for _, f := range r.Findings {
					if f.Code == CodeDuplicateWrite {
						seen[r.Kind] = true
					}
				}
			}
			for _, k := range repeats {
				assert.True(t, seen[k], "%s: no duplicate_write", k)
			}
		})
	}
}
