package runtime_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// timerMailer schedules a reminder that a timer sends later (no goroutine
// of Setup's at work meanwhile); keyed, a second schedule for the same
// user sends nothing more. The first delivery the suite ever runs (the
// baseline's) waits for the mail; the others return at once, as an agent
// that waits for a send window Setup opened does when the window opens
// first.
type timerMailer struct {
	keyed  bool
	delay  time.Duration
	waited atomic.Bool

	mu     sync.Mutex
	sent   map[string]int
	armed  map[string]bool
	timers []*time.Timer
}

var opScheduleMail = &runtime.Op{Name: "schedule_mail", Kind: runtime.KindWrite, Params: []string{"user"}}

func (m *timerMailer) setupMailer(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent, m.armed = map[string]int{}, map[string]bool{}
	return nil
}

func (m *timerMailer) teardownMailer(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.timers {
		t.Stop()
	}
	m.timers = nil
	return nil
}

func (m *timerMailer) stateOfMails() any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return map[string]int{"ada": m.sent["ada"]}
}

func (m *timerMailer) armReminder(ctx context.Context, user string) (err error) {
	c, _ := runtime.Begin(ctx, opScheduleMail, []any{user}, []any{user}, nil)
	if err := c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	m.mu.Lock()
	if !m.keyed || !m.armed[user] {
		m.armed[user] = true
		sent := m.sent
		m.timers = append(m.timers, time.AfterFunc(m.delay, func() {
			m.mu.Lock()
			sent[user]++
			m.mu.Unlock()
		}))
	}
	m.mu.Unlock()
	return c.Finish(nil)
}

func (m *timerMailer) remindAgent(ctx context.Context) error {
	if err := m.armReminder(ctx, "ada"); err != nil {
		return err
	}
	if m.waited.CompareAndSwap(false, true) {
		time.Sleep(m.delay + 50*time.Millisecond)
	}
	return nil
}

// A scenario that stalled never read its end, which is what judges a
// repeat whose window changed nothing where no window showed the op's
// effect, here or in the baseline (a mail a timer sends after the call).
// The keyed scheduler's second delivery blocks on a one-shot channel the
// first consumed: the stall is true, and the repeat is unjudged beside
// it. Before, it was counted, a duplicate_write of the correct scheduler
// beside its true stall (red team rZ #2, rtx/remind, 3 runs of 3).
func TestARepeatInAStalledScenarioIsNotCounted(t *testing.T) {
	m := &timerMailer{keyed: true, delay: 20 * time.Millisecond}
	window := make(chan struct{}, 1)
	agent := func(ctx context.Context) error {
		if err := m.remindAgent(ctx); err != nil {
			return err
		}
		select { // the send window: one value, which Setup puts
		case <-window:
			return nil
		case <-ctx.Done(): // the harness abandons the stalled scenario
			return ctx.Err()
		}
	}
	setup := func(ctx context.Context) error {
		select {
		case <-window:
		default:
		}
		window <- struct{}{}
		return m.setupMailer(ctx)
	}
	rep, err := runtime.Run(context.Background(), t.Name(), agent,
		runtime.Setup(setup), runtime.Teardown(m.teardownMailer), runtime.State(m.stateOfMails),
		runtime.StallTimeout(time.Second), runtime.OnlyScenario("duplicate_delivery/sequential"))
	if err != nil {
		t.Fatal(err)
	}
	var seq *runtime.Result
	for _, r := range rep.Results {
		if r.Scenario == "duplicate_delivery/sequential" {
			seq = r
		}
	}
	if seq == nil {
		t.Fatalf("no duplicate_delivery/sequential:\n%s", verdictOf(rep))
	}
	stalled := false
	for _, f := range seq.Findings {
		switch f.Code {
		case runtime.CodeStalled:
			stalled = true
		default:
			t.Errorf("finding %s: %s", f.Code, f.Message)
		}
	}
	if !stalled {
		t.Fatalf("want the second delivery stalled:\n%s", verdictOf(rep))
	}
	noted := false
	for _, n := range seq.Trace.Notes {
		noted = noted || strings.Contains(n, "the scenario stalled before its end was read")
	}
	if !noted {
		t.Fatalf("the trace does not say why the repeat was not judged: %q", seq.Trace.Notes)
	}
}
