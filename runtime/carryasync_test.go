package runtime_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// asyncBus models an event-driven agent on a message bus in the process
// (red team rtY #4 and #5: watermill's router on its gochannel Pub/Sub),
// with channels: the agent's delivery publishes a payment event carrying
// runtime.Token(ctx) in its headers; a consumer that Setup starts takes
// it with runtime.Resolve and makes the traced charge, which honours its
// context as a database call does. A handler that fails is retried
// (twice, as a retry middleware does), then the message is nacked and
// the bus delivers it again, at once, until a handler succeeds. pending
// counts the messages not yet acked, for the Settle.
//
// block makes the publisher wait for the ack, as gochannel's
// BlockPublishUntilSubscriberAck does; ackURL, when set, makes it wait
// for the ack over HTTP (a broker's confirm), so that the crashed
// delivery never looks gone to the harness (it waits for the network).
//
// meet makes a charge of an order already charged wait, up to a second,
// for another such charge to be in flight, so that the restart's two
// charges after a crash (the message redelivered and its own) overlap on
// every run.
type asyncBus struct {
	keyed, block, meet bool
	met                chan struct{} // closed once two charges met (meet)
	meeting            int
	// slow makes the consumer take every message but the first it ever
	// handled (the baseline's) that long after it was published.
	slow    time.Duration
	handled atomic.Int32
	ackURL  string
	acks    sync.Map // order -> *busEvent, for the ack server

	bus     chan *busEvent
	quit    chan struct{}
	wg      sync.WaitGroup
	pending atomic.Int64

	mu      sync.Mutex
	charged map[string]int
}

// busEvent is a message on the bus: a payload and headers, and its ack.
type busEvent struct {
	order   string
	headers map[string]string
	acked   chan struct{}
	isAcked atomic.Bool
}

var opAsyncCharge = &runtime.Op{Name: "charge", Kind: runtime.KindWrite, Params: []string{"order"}}

func (b *asyncBus) setup(context.Context) error {
	b.mu.Lock()
	b.charged = map[string]int{}
	b.met, b.meeting = make(chan struct{}), 0
	b.mu.Unlock()
	b.bus, b.quit = make(chan *busEvent, 16), make(chan struct{})
	b.pending.Store(0)
	b.wg.Add(1)
	go func() { // the consumer
		defer b.wg.Done()
		for {
			select {
			case <-b.quit:
				return
			case m := <-b.bus:
				b.wg.Add(1)
				go b.handle(m) // a goroutine per delivery of a message, as gochannel's
			}
		}
	}()
	return nil
}

// handle runs the handler with retries; a failed message goes back on
// the bus.
func (b *asyncBus) handle(m *busEvent) {
	defer b.wg.Done()
	time.Sleep(time.Millisecond) // the publisher has returned, on every run
	if b.handled.Add(1) > 1 {
		time.Sleep(b.slow)
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Millisecond)
		}
		ctx, stop := runtime.Resolve(context.Background(), m.headers["agentidem-run"])
		err = b.charge(ctx, m.order)
		stop()
		if err == nil {
			break
		}
	}
	if err != nil {
		select { // nacked: delivered again
		case b.bus <- m:
		case <-b.quit:
		}
		return
	}
	b.pending.Add(-1)
	m.isAcked.Store(true)
	close(m.acked)
}

func (b *asyncBus) charge(ctx context.Context, order string) (err error) {
	c, ctx := runtime.Begin(ctx, opAsyncCharge, []any{order}, []any{order}, nil)
	if err := c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	if err := ctx.Err(); err != nil {
		return c.Finish(err)
	}
	b.mu.Lock()
	if b.meet && b.charged[order] != 0 {
		if b.meeting++; b.meeting == 2 {
			close(b.met)
		}
		met := b.met
		b.mu.Unlock()
		select {
		case <-met:
		case <-time.After(time.Second):
		case <-ctx.Done():
		}
		b.mu.Lock()
	}
	if !b.keyed || b.charged[order] == 0 {
		b.charged[order] += 500
	}
	b.mu.Unlock()
	return c.Finish(nil)
}

func (b *asyncBus) teardown(context.Context) error {
	close(b.quit)
	b.wg.Wait()
	return nil
}

func (b *asyncBus) state() any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return map[string]int{"ord-1": b.charged["ord-1"]}
}

// checkout is the agent's delivery: it publishes the payment event.
func (b *asyncBus) checkout(ctx context.Context) error {
	m := &busEvent{order: "ord-1", headers: map[string]string{"agentidem-run": runtime.Token(ctx)}, acked: make(chan struct{})}
	b.pending.Add(1)
	b.bus <- m
	switch {
	case b.ackURL != "":
		b.acks.Store(m.order, m)
		resp, err := http.Get(b.ackURL + "?order=" + m.order)
		if err != nil {
			return err
		}
		resp.Body.Close()
	case b.block:
		<-m.acked
	}
	return nil
}

func (b *asyncBus) settle(ctx context.Context) error {
	deadline := time.Now().Add(3 * time.Second)
	for b.pending.Load() != 0 {
		if time.Now().After(deadline) {
			return errors.New("messages still pending")
		}
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// runAsyncBus runs the suite, failing the test if it does not end in
// bound: a scenario that runs unbounded is the bug.
func runAsyncBus(t *testing.T, b *asyncBus, bound time.Duration, opts ...runtime.Option) *runtime.Report {
	t.Helper()
	return runBounded(t, bound, b.checkout, append([]runtime.Option{runtime.Setup(b.setup), runtime.Teardown(b.teardown),
		runtime.State(b.state), runtime.Settle(b.settle)}, opts...)...)
}

// runBounded runs agent's suite, failing the test if it does not end in
// bound.
func runBounded(t *testing.T, bound time.Duration, agent func(context.Context) error, opts ...runtime.Option) *runtime.Report {
	t.Helper()
	type out struct {
		rep *runtime.Report
		err error
	}
	done := make(chan out, 1)
	go func() {
		rep, err := runtime.Run(context.Background(), t.Name(), agent, opts...)
		done <- out{rep, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatal(o.err)
		}
		return o.rep
	case <-time.After(bound):
		t.Fatalf("the suite did not end in %s", bound)
		return nil
	}
}

// verdictOf is a report's scenarios and their verdicts, for a failure's
// message.
func verdictOf(rep *runtime.Report) string {
	var b strings.Builder
	b.WriteString("baseline: " + rep.BaselineFailure + "\n")
	for _, r := range rep.Results {
		v := "ok"
		switch {
		case r.Inconclusive:
			v = "inconclusive"
		case !r.Safe:
			v = "UNSAFE"
		}
		b.WriteString(r.Scenario + ": " + v + "\n")
	}
	for _, f := range rep.Findings {
		b.WriteString("  " + f.Code + " " + string(f.Severity) + ": " + f.Message + "\n")
	}
	return b.String()
}

// A consumer of a bus whose publisher does not wait for the handler (the
// run carried with runtime.Token and runtime.Resolve) serves the delivery
// after it returned. Before, the served context was cancelled as the
// delivery returned, and its token forgotten: the consumer's calls were
// untraced or failed with context.Canceled, and the verdict hung on
// whether the handler beat the delivery's return (red team rtY #4: the
// same agent BASELINE FAILED, INCONCLUSIVE or SAFE from run to run, the
// buggy twin never UNSAFE). Now the context ends only when the harness
// ends the delivery (a crash, an abandon), the token lives as long as the
// run, and each delivery is held open until the Settle sees the world
// quiet: the buggy consumer's double charge is a duplicate_write, and
// the keyed one is SAFE, on every run.
func TestConsumerOfACarriedRunServesTheDeliveryAfterItReturned(t *testing.T) {
	t.Run("buggy", func(t *testing.T) {
		rep := runAsyncBus(t, &asyncBus{}, 60*time.Second)
		if !rep.BaselineSucceeded || rep.InconclusiveCount != 0 || rep.UnsafeCount < 3 {
			t.Fatalf("want the baseline ok, none inconclusive, lost_acknowledgement, crash_restart and duplicate_delivery unsafe:\n%s", verdictOf(rep))
		}
		for _, f := range rep.Findings {
			if f.Severity == runtime.SeverityError && f.Code != runtime.CodeDuplicateWrite || f.Code == runtime.CodeGoroutineLeak {
				t.Errorf("finding %s: %s", f.Code, f.Message)
			}
		}
	})
	t.Run("keyed", func(t *testing.T) {
		rep := runAsyncBus(t, &asyncBus{keyed: true}, 60*time.Second)
		if !rep.Safe || rep.InconclusiveCount != 0 || len(rep.Findings) != 0 {
			t.Fatalf("want SAFE with nothing to note:\n%s", verdictOf(rep))
		}
	})
}

// A consumer that takes the message after the publisher returned, where
// no Settle is given: each delivery that carried the run is held until
// the state held still for twice as long as the baseline's consumer took
// to call after its delivery returned, and its calls are the delivery's.
// Before, the run ended as the delivery returned and the token was
// forgotten: the charge 1 ms later was a call of no run, untraced and
// told nowhere, and the run's end, read before it, said it was never
// made: the keyed charge was a missing_write in the duplicate deliveries
// of 2 runs in 6, and lost_acknowledgement's "the agent never made call
// charge#1" in others. A call that comes later still is the run's late
// call, a goroutine_leak warning that says to give a Settle.
func TestConsumerCallAfterTheRunWithoutASettle(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		t.Run(map[bool]string{false: "buggy", true: "keyed"}[keyed], func(t *testing.T) {
			b := &asyncBus{keyed: keyed}
			rep := runBounded(t, 60*time.Second, b.checkout, runtime.Setup(b.setup), runtime.Teardown(b.teardown), runtime.State(b.state))
			for _, f := range rep.Findings {
				if f.Code == runtime.CodeMissingWrite || f.Code == runtime.CodeFaultNotTriggered || f.Code == runtime.CodeGoroutineLeak {
					t.Errorf("%s: %s", f.Code, f.Message)
				}
			}
			if keyed {
				if !rep.Safe || rep.InconclusiveCount != 0 || len(rep.Findings) != 0 {
					t.Fatalf("want SAFE with nothing to note:\n%s", verdictOf(rep))
				}
				return
			}
			if rep.UnsafeCount < 3 || rep.InconclusiveCount != 0 {
				t.Fatalf("want lost_acknowledgement, crash_restart and the duplicate deliveries unsafe:\n%s", verdictOf(rep))
			}
			for _, f := range rep.Findings {
				if f.Severity == runtime.SeverityError && f.Code != runtime.CodeDuplicateWrite {
					t.Errorf("finding %s: %s", f.Code, f.Message)
				}
			}
		})
	}
}

// Where the consumer takes a message later than the hold (150 ms, where
// the baseline's took 1 ms), its call comes after the run ended: the
// run's late call, kept with its token until the report, not a call of
// no run told nowhere. The scenario is inconclusive, with a warning that
// says the call was carried and to give a Settle, and the missing_write
// that the end read before it said is withdrawn.
func TestConsumerCallLaterThanTheHoldIsTheRunsLateCall(t *testing.T) {
	b := &asyncBus{keyed: true, slow: 150 * time.Millisecond}
	rep := runBounded(t, 60*time.Second, b.checkout,
		runtime.Setup(b.setup), runtime.Teardown(b.teardown), runtime.State(b.state),
		runtime.OnlyScenario("duplicate_delivery/sequential"))
	var late string
	for _, f := range rep.Findings {
		if f.Severity == runtime.SeverityError {
			t.Errorf("%s: %s", f.Code, f.Message)
		}
		if f.Code == runtime.CodeGoroutineLeak {
			late = f.Message
		}
	}
	if rep.InconclusiveCount != 1 || late == "" {
		t.Fatalf("want duplicate_delivery/sequential inconclusive, with a late call:\n%s", verdictOf(rep))
	}
	for _, want := range []string{"with the run carried (runtime.Resolve)", "give a Settle", "withdrawn, as a late call may have made the write: [missing_write] charge"} {
		if !strings.Contains(late, want) {
			t.Errorf("the warning does not say %q: %s", want, late)
		}
	}
}

// The restart's two charges after a crash (the message the crashed
// delivery published, redelivered, and the restart's own) overlap in
// time. The keyed charge's two changed nothing, after the crashed
// delivery's charge had made the one change: with a Settle, that was a
// duplicate_write "the repeat changed the state: , where one execution
// made ord-1: 0 → 500" in 1 to 4 runs of 40 under -race, when the two met
// by chance, for a quiet cluster was absorbed only where the ends had
// been read as the agent returned, which a run with a Settle does not
// read. The unkeyed charge's two add 1,000: a duplicate_write.
func TestQuietOverlappedRepeatsAfterACrashAreAbsorbed(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		t.Run(map[bool]string{false: "buggy", true: "keyed"}[keyed], func(t *testing.T) {
			b := &asyncBus{keyed: keyed, meet: true}
			rep := runAsyncBus(t, b, 60*time.Second, runtime.OnlyScenario("crash_restart/charge#1"))
			var crash *runtime.Result
			for _, r := range rep.Results {
				if r.Scenario == "crash_restart/charge#1" {
					crash = r
				}
			}
			if crash == nil {
				t.Fatalf("no crash_restart/charge#1:\n%s", verdictOf(rep))
			}
			overlapped := 0
			for _, o := range crash.Trace.Ops {
				if o.Name == "charge" && o.Overlapped {
					overlapped++
				}
			}
			if overlapped < 2 {
				t.Fatalf("the restart's two charges did not overlap (%d did): the test tests nothing\n%s", overlapped, verdictOf(rep))
			}
			if keyed {
				if !crash.Safe || crash.Inconclusive || len(crash.Findings) != 0 {
					t.Fatalf("want the keyed charge SAFE:\n%s", verdictOf(rep))
				}
				return
			}
			if crash.Safe || crash.Inconclusive || len(crash.Findings) == 0 || crash.Findings[0].Code != runtime.CodeDuplicateWrite {
				t.Fatalf("want the unkeyed charge a duplicate_write:\n%s", verdictOf(rep))
			}
		})
	}
}

// After a crash, a message the crashed delivery published with its token
// is delivered again by the bus (nacked): in production the restarted
// process handles it. Before, each such delivery's call was refused as
// the crashed delivery's, for good, and the refusals counted as
// progress: the bus redelivered the message forever, the crashed
// delivery waited for its ack, and the scenario never ended (red team
// rtY #5). Now a refused call is no progress, so the crashed delivery is
// taken as gone and restarted, and from then on the token is served as
// the restart's: the buggy charge is a duplicate_write of crash_restart,
// the keyed one SAFE.
func TestRedeliveredMessageOfACrashedDeliveryIsTheRestarts(t *testing.T) {
	t.Run("buggy", func(t *testing.T) {
		rep := runAsyncBus(t, &asyncBus{block: true}, 60*time.Second, runtime.StallTimeout(5*time.Second))
		var crash *runtime.Result
		for _, r := range rep.Results {
			if strings.HasPrefix(r.Scenario, "crash_restart/") {
				crash = r
			}
		}
		if crash == nil || crash.Inconclusive || crash.Safe {
			t.Fatalf("want crash_restart unsafe:\n%s", verdictOf(rep))
		}
		for _, f := range crash.Findings {
			if f.Code != runtime.CodeDuplicateWrite {
				t.Errorf("finding %s: %s", f.Code, f.Message)
			}
		}
	})
	t.Run("keyed", func(t *testing.T) {
		rep := runAsyncBus(t, &asyncBus{keyed: true, block: true}, 60*time.Second, runtime.StallTimeout(5*time.Second))
		if !rep.Safe || rep.InconclusiveCount != 0 || len(rep.Findings) != 0 {
			t.Fatalf("want SAFE with nothing to note:\n%s", verdictOf(rep))
		}
	})
}

// A crashed delivery that never looks gone (it waits for its ack over
// HTTP, as for a broker's confirm) is not restarted, and the calls of its message, delivered again
// and again, are refused for as long as it waits. That loop is no
// progress: the scenario stalls at the stall bound, and the message says
// how many calls the crash refused, and the first. Before, it ran
// unbounded (red team rtY #5).
func TestLoopOfRefusedCallsAfterACrashStalls(t *testing.T) {
	b := &asyncBus{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m, ok := b.acks.Load(r.URL.Query().Get("order")); ok {
			select {
			case <-m.(*busEvent).acked:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	b.ackURL = srv.URL
	rep := runAsyncBus(t, b, 60*time.Second, runtime.StallTimeout(time.Second), runtime.OnlyScenario("crash_restart/charge#1"))
	var stall string
	for _, f := range rep.Findings {
		if f.Code == runtime.CodeStalled {
			stall = f.Message
		}
	}
	if stall == "" {
		t.Fatalf("want crash_restart stalled:\n%s", verdictOf(rep))
	}
	for _, want := range []string{"the crash of delivery 1 refused", "charge at carryasync_test.go", "counted as no progress"} {
		if !strings.Contains(stall, want) {
			t.Errorf("the stall does not say %q: %s", want, stall)
		}
	}
}

// rpcMailer models a tool served over an RPC in the process (red team
// rZ #1: an MCP server over streamable HTTP): the agent's delivery sends
// the request with runtime.Token and waits for the answer; a server that
// Setup starts takes its context from runtime.Resolve and runs the traced
// notify, which answers at once and mails from a goroutine 5 ms later.
// The mail service keeps one mail per order (keyed), or every mail. The
// Settle waits for the mails in flight.
//
// meet makes the server serve each request on a goroutine of its own, and
// each notify wait, up to 30 ms, for another to be in flight, so that the
// concurrent redelivery's two notifies overlap on every run.
type rpcMailer struct {
	keyed   bool
	meet    bool
	met     chan struct{} // closed once two notifies were in flight (meet)
	meeting int
	reqs    chan rpcReq
	quit    chan struct{}
	wg      sync.WaitGroup
	mailing sync.WaitGroup

	mu    sync.Mutex
	mails map[string]int
}

type rpcReq struct {
	order, tok string
	done       chan error
}

var opRPCNotify = &runtime.Op{Name: "notify", Kind: runtime.KindWrite, Params: []string{"order"}}

func (m *rpcMailer) setup(context.Context) error {
	m.mu.Lock()
	m.mails = map[string]int{}
	m.met, m.meeting = make(chan struct{}), 0
	m.mu.Unlock()
	m.reqs, m.quit = make(chan rpcReq), make(chan struct{})
	m.wg.Add(1)
	go func() { // the server
		defer m.wg.Done()
		for {
			select {
			case <-m.quit:
				return
			case r := <-m.reqs:
				serve := func() {
					ctx, stop := runtime.Resolve(context.Background(), r.tok)
					r.done <- m.notify(ctx, r.order)
					stop()
				}
				if !m.meet {
					serve()
					continue
				}
				m.wg.Add(1)
				go func() {
					defer m.wg.Done()
					serve()
				}()
			}
		}
	}()
	return nil
}

func (m *rpcMailer) notify(ctx context.Context, order string) (err error) {
	c, _ := runtime.Begin(ctx, opRPCNotify, []any{order}, []any{order}, nil)
	if err := c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	if m.meet {
		m.mu.Lock()
		if m.meeting++; m.meeting == 2 {
			close(m.met)
		}
		met := m.met
		m.mu.Unlock()
		select {
		case <-met:
		case <-time.After(30 * time.Millisecond):
		}
	}
	m.mailing.Add(1)
	go func() { // fire and forget, as a mailer does
		defer m.mailing.Done()
		time.Sleep(5 * time.Millisecond)
		m.mu.Lock()
		if !m.keyed || m.mails[order] == 0 {
			m.mails[order]++
		}
		m.mu.Unlock()
	}()
	return c.Finish(nil)
}

func (m *rpcMailer) teardown(context.Context) error {
	close(m.quit)
	m.wg.Wait()
	m.mailing.Wait()
	return nil
}

func (m *rpcMailer) state() any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return map[string]int{"ord-7": m.mails["ord-7"]}
}

func (m *rpcMailer) agent(ctx context.Context) error {
	r := rpcReq{order: "ord-7", tok: runtime.Token(ctx), done: make(chan error, 1)}
	select {
	case m.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A tool served with the run carried and no traced call around it
// settles nothing itself, so a mail it sends 5 ms after it answered lands
// in no window, here or in the baseline. With a Settle, both ends are read
// once it said the world was quiet: the keyed mailer's repeats are judged
// by the end, the baseline's, and absorbed. Before, they were counted, a
// duplicate_write of the correct agent in 4 of 14 scenarios on every run
// (red team rZ #1). The mailer that keeps every mail ends with two: a
// duplicate_write.
//
// Where the concurrent redelivery's two notifies overlap (meet), neither
// has a window of its own, only their cluster's: the same end judges them
// (before, they were counted, a duplicate_write of the keyed mailer in 11
// of 75 runs of rtY #10's agent, three test binaries at once).
func TestAMailAfterACarriedCallAnsweredIsJudgedByTheSettledEnd(t *testing.T) {
	for _, c := range []struct {
		name        string
		keyed, meet bool
	}{{"buggy", false, false}, {"keyed", true, false}, {"buggy/overlapped", false, true}, {"keyed/overlapped", true, true}} {
		keyed := c.keyed
		t.Run(c.name, func(t *testing.T) {
			m := &rpcMailer{keyed: keyed, meet: c.meet}
			rep, err := runtime.Run(context.Background(), t.Name(), m.agent,
				runtime.Setup(m.setup), runtime.Teardown(m.teardown), runtime.State(m.state),
				runtime.Settle(func(context.Context) error { m.mailing.Wait(); return nil }))
			if err != nil {
				t.Fatal(err)
			}
			if keyed {
				if !rep.Safe || rep.InconclusiveCount != 0 || len(rep.Findings) != 0 {
					t.Fatalf("want SAFE with nothing to note:\n%s", verdictOf(rep))
				}
				return
			}
			if rep.UnsafeCount < 3 || rep.InconclusiveCount != 0 {
				t.Fatalf("want lost_acknowledgement, crash_restart and the duplicate deliveries unsafe:\n%s", verdictOf(rep))
			}
			for _, f := range rep.Findings {
				if f.Code != runtime.CodeDuplicateWrite {
					t.Errorf("finding %s: %s", f.Code, f.Message)
				}
			}
			for _, r := range rep.Results {
				if r.Kind == runtime.ScenarioDuplicateConcurrent && (r.Safe || r.Inconclusive) {
					t.Errorf("the concurrent redelivery's two mails passed:\n%s", verdictOf(rep))
				}
			}
		})
	}
}
