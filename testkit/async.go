package testkit

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"time"
)

// Event is one thing that happened asynchronously: a background worker
// opened a ticket, a message was published. Tools emit events to a Stream;
// assertions read them back through a Source.
type Event struct {
	// Seq is the event's 1-based position in its stream; Stream.Emit sets it.
	Seq int `json:"seq"`
	// At is when the event happened; Stream.Emit sets it to time.Now()
	// (virtual time in a bubble) when it is zero.
	At time.Time `json:"at"`
	// Session is the agent session (conversation, invocation) the event is
	// attributed to.
	Session string `json:"session,omitempty"`
	// Queue is where the event was routed.
	Queue string `json:"queue,omitempty"`
	// Kind says what happened, e.g. "ticket.opened".
	Kind string `json:"kind"`
	// Subject is what it happened to, e.g. a dispute id.
	Subject string `json:"subject,omitempty"`
	// Data carries anything else.
	Data any `json:"data,omitempty"`
}

// String renders the event on one line, with its time as given.
func (e Event) String() string {
	return e.format(time.Time{})
}

// format renders the event with its time relative to base when base is set.
func (e Event) format(base time.Time) string {
	var b strings.Builder
	if e.Seq > 0 {
		fmt.Fprintf(&b, "#%d ", e.Seq)
	}
	b.WriteString(e.Kind)
	if e.Subject != "" {
		fmt.Fprintf(&b, " %s", e.Subject)
	}
	fmt.Fprintf(&b, " queue=%q session=%q", e.Queue, e.Session)
	switch {
	case e.At.IsZero():
	case base.IsZero():
		fmt.Fprintf(&b, " at %s", e.At.Format("15:04:05.000000"))
	default:
		d := e.At.Sub(base)
		sign := "+"
		if d < 0 {
			sign, d = "-", -d
		}
		fmt.Fprintf(&b, " at %s%s", sign, d)
	}
	return b.String()
}

// Source is an event stream the async assertions read. Events returns
// every event so far, oldest first; the stream only grows, so a later
// call returns an extension of an earlier one. *Stream implements it: it
// stamps its events and, outside a bubble, wakes waiting assertions. Any
// other Source is polled, its events timed by when an assertion first saw
// them.
//
// A tool that commits through a background worker answers "accepted" at
// once and does the work later: the effect the test cares about is an
// event that arrives after the agent returned. Three assertions wait for
// such effects:
//
//   - Eventually(t, cond, within, opts...) looks at cond until it holds.
//   - ExactlyOne(t, src, match, within, opts...) wants exactly one
//     matching event in the window: a second match fails at once; a single
//     match succeeds when the window closes (or Settle after it happened),
//     and only if it passed every guard.
//   - Quiet(t, src, quietFor, maxWait, opts...) wants the stream to go
//     quiet: it succeeds once quietFor passed with no new event and fails
//     if events keep coming until maxWait.
//
// Options scope the events (FromSession: attribution, other sessions'
// events do not count; Since: this turn's window, events before the turn
// started do not count) and guard the matches (OnQueue: routing, a match
// on another queue fails at once). Every failure says what was wanted and
// what was seen, with event times relative to the assertion's start:
//
//	testkit.ExactlyOne: want exactly one ticket.opened D-1001 on queue "disputes"
//	from session "s-1" since the turn started within 500ms (virtual time); saw 2
//	by +70ms: #1 ticket.opened D-1001 queue="disputes" session="s-1" at +20ms, #2 ...
//
// A test of the ticket worker (examples/tickets/worker_test.go):
//
//	synctest.Test(t, func(t *testing.T) {
//		events := testkit.NewStream()
//		w := tickets.NewWorker(desk, 50*time.Millisecond, func(o tickets.Opened) {
//			events.Emit(testkit.Event{Kind: "ticket.opened", Subject: o.DisputeID, Queue: o.Queue, Session: o.Session})
//		})
//		defer w.Close()
//		turn := time.Now()
//		agent.Run(ctx, "D-1001") // answers "accepted"; the ticket opens 50ms later
//		testkit.ExactlyOne(t, events, testkit.KindFor("ticket.opened", "D-1001"), 500*time.Millisecond,
//			testkit.OnQueue("disputes"), testkit.FromSession("s-1"), testkit.Since(turn))
//		testkit.Quiet(t, events, 200*time.Millisecond, time.Second, testkit.FromSession("s-1"))
//	})
//
// Virtual time. Inside a testing/synctest bubble time is virtual: the
// assertions sleep until their next deadline, looking in between once per
// poll interval (1ms; Quiet on a Stream need not), and the bubble's
// clock jumps to the next timer as soon as every goroutine is blocked. The
// test above, 730ms of scenario, takes well under a millisecond of wall
// time (scripts/bench/async.sh measures each assertion both ways). Outside
// a bubble the same calls wait in real time. The mode is detected on every
// call (see DetectClock) and can be forced with WithClock; failure
// messages say which clock they waited on.
//
// On virtual time the outcome never depends on the order in which the
// goroutines due at one instant happen to run: each look at the stream
// happens one nanosecond after its instant, once all of them have run, so
// an assertion returns one nanosecond after the instant it decided at. Let
// the bubble's goroutines (the worker) end before the bubble does:
// synctest.Test waits for them.
type Source interface {
	Events() []Event
}

// Stream records the events that tools emit; it is a Source. The zero
// value is ready to use and it is safe for concurrent use.
//
// Outside a synctest bubble, an assertion waiting on a Stream is woken by
// each Emit instead of polling it, so it notices an event at the instant
// it happens. Inside a bubble it sleeps on the virtual clock instead (see
// Source), and the Stream's timestamps make Quiet exact without polling.
type Stream struct {
	mu      sync.Mutex
	events  []Event
	waiters map[chan struct{}]struct{}
}

// NewStream returns an empty stream.
func NewStream() *Stream { return &Stream{} }

// Emit appends e to the stream, numbering it and stamping it with
// time.Now() if its At is zero, wakes the assertions waiting on the
// stream, and returns the stored event.
func (s *Stream) Emit(e Event) Event {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	s.mu.Lock()
	e.Seq = len(s.events) + 1
	s.events = append(s.events, e)
	waiters := s.waiters
	s.waiters = nil
	s.mu.Unlock()
	for ch := range waiters {
		close(ch) // made outside any bubble (see watch): safe from anywhere
	}
	return e
}

// Events returns a copy of the events emitted so far, oldest first.
func (s *Stream) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// subscribe returns a channel closed at the next Emit, and a func that
// withdraws it. Only waiters outside any bubble subscribe (see watch), so
// the channel belongs to no bubble and Emit may close it from anywhere.
func (s *Stream) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	if s.waiters == nil {
		s.waiters = map[chan struct{}]struct{}{}
	}
	s.waiters[ch] = struct{}{}
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.waiters, ch)
		s.mu.Unlock()
	}
}

// waker is a Source that can wake a waiting assertion at its next event;
// other sources are polled.
type waker interface {
	subscribe() (<-chan struct{}, func())
}

// watch subscribes to src's next event when src can wake waiters and the
// caller is outside a synctest bubble; the channel is nil otherwise. In a
// bubble the assertions do not subscribe: their channel would belong to
// the bubble, and an Emit from outside it (a stream shared with another
// test) would be a fatal error. They sleep from deadline to deadline
// instead, which on virtual time costs next to nothing.
func (c *waitConfig) watch(src Source) (<-chan struct{}, func()) {
	if w, ok := src.(waker); ok && !c.bubble {
		return w.subscribe()
	}
	return nil, func() {}
}

// Matcher picks the events an assertion looks for; String describes them
// in failure messages ("ticket.opened D-1001").
type Matcher interface {
	Match(Event) bool
	String() string
}

type matcher struct {
	desc string
	fn   func(Event) bool
}

func (m matcher) Match(e Event) bool { return m.fn(e) }
func (m matcher) String() string     { return m.desc }

// Match is a Matcher from a predicate and its description.
func Match(desc string, fn func(Event) bool) Matcher {
	if fn == nil {
		panic("testkit: Match with a nil func")
	}
	return matcher{desc: desc, fn: fn}
}

// Kind matches events of one kind, about any subject.
func Kind(kind string) Matcher {
	return Match(kind, func(e Event) bool { return e.Kind == kind })
}

// KindFor matches events of one kind about one subject.
func KindFor(kind, subject string) Matcher {
	return Match(kind+" "+subject, func(e Event) bool { return e.Kind == kind && e.Subject == subject })
}

// Clock is how an async assertion waits: on a synctest bubble's virtual
// clock, or in real time.
type Clock int

const (
	// AutoClock detects the clock on every call (see DetectClock).
	AutoClock Clock = iota
	// VirtualClock is the fake clock of a testing/synctest bubble.
	VirtualClock
	// RealClock is the wall clock.
	RealClock
)

// String names the clock as failure messages do.
func (c Clock) String() string {
	switch c {
	case VirtualClock:
		return "virtual time"
	case RealClock:
		return "real time"
	default:
		return "auto"
	}
}

// synctest bubbles start their clock at midnight UTC 2000-01-01.
var (
	bubbleEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	bubbleLimit = bubbleEpoch.AddDate(10, 0, 0)
)

// DetectClock reports whether the calling goroutine runs on a synctest
// bubble's virtual clock. It needs nothing but package time: a bubble's
// clock starts at midnight UTC 2000-01-01 and stands still while a
// goroutine runs (it moves only when every goroutine in the bubble is
// blocked). So the clock is virtual when time.Now() lies in the ten years
// after that epoch and does not move across a yield of the processor.
// A wall clock set to 2000-2009 still moves, so it is not mistaken for a
// bubble; a bubble whose test slept more than ten virtual years reads as
// real time (force the mode with WithClock if you do that).
func DetectClock() Clock {
	t1 := time.Now()
	if t1.Before(bubbleEpoch) || !t1.Before(bubbleLimit) {
		return RealClock
	}
	goruntime.Gosched()
	if t2 := time.Now(); !t2.Equal(t1) {
		return RealClock
	}
	return VirtualClock
}

// Default poll intervals. On virtual time a poll costs a goroutine switch,
// not a wait, so it can be fine grained.
const (
	DefaultVirtualPoll = time.Millisecond
	DefaultRealPoll    = 5 * time.Millisecond
)

// WaitOption configures Eventually, ExactlyOne and Quiet.
type WaitOption func(*waitConfig)

type waitConfig struct {
	clock   Clock
	bubble  bool // detected, whatever WithClock says
	poll    time.Duration
	session *string
	since   time.Time
	queue   *string
	settle  time.Duration
	wakeOn  Source
	expect  string
}

// FromSession is the attribution scope: only events of session id count.
// Matching events of other sessions are ignored (failure messages list
// them). ExactlyOne and Quiet.
func FromSession(id string) WaitOption { return func(c *waitConfig) { c.session = &id } }

// Since is the window scope: events that happened before start (the
// beginning of this turn) do not count; events at start or later do.
// ExactlyOne and Quiet.
func Since(start time.Time) WaitOption { return func(c *waitConfig) { c.since = start } }

// OnQueue is the routing guard: a match routed to another queue fails
// ExactlyOne at once, naming both queues.
func OnQueue(queue string) WaitOption { return func(c *waitConfig) { c.queue = &queue } }

// Settle lets ExactlyOne succeed once d has passed since its single match
// happened, instead of waiting for the whole window: shorter in real time,
// at the price of missing a duplicate that arrives later than d.
func Settle(d time.Duration) WaitOption { return func(c *waitConfig) { c.settle = d } }

// WakeOn makes Eventually look at its condition again whenever src has a
// new event (src must be a *Stream), instead of polling it, when it runs
// outside a synctest bubble: the condition is one that only an event of
// src can make true. Inside a bubble it polls on the virtual clock anyway.
func WakeOn(src Source) WaitOption { return func(c *waitConfig) { c.wakeOn = src } }

// Expecting describes what Eventually waits for in its failure message
// ("want <desc> within 1s"); without it the message says "the condition".
func Expecting(desc string) WaitOption { return func(c *waitConfig) { c.expect = desc } }

// PollEvery sets how often the assertion looks at its source or condition
// (defaults: DefaultVirtualPoll, DefaultRealPoll).
func PollEvery(d time.Duration) WaitOption { return func(c *waitConfig) { c.poll = d } }

// WithClock forces the clock instead of detecting it. It only changes
// poll defaults and messages: the assertions sleep with package time,
// which is virtual in a bubble and real outside.
func WithClock(c Clock) WaitOption { return func(cfg *waitConfig) { cfg.clock = c } }

func newWaitConfig(opts []WaitOption) waitConfig {
	var c waitConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	detected := DetectClock()
	c.bubble = detected == VirtualClock
	if c.clock == AutoClock {
		c.clock = detected
	}
	if c.poll <= 0 {
		c.poll = DefaultRealPoll
		if c.clock == VirtualClock {
			c.poll = DefaultVirtualPoll
		}
	}
	return c
}

// begin returns the instant an assertion starts at. On virtual time it
// first lets every goroutine due at this instant run (see now).
func (c *waitConfig) begin() time.Time {
	if c.clock == VirtualClock {
		time.Sleep(1)
	}
	return c.now()
}

// now is the logical instant of an observation. On virtual time the
// assertion wakes one nanosecond after the instant it looks at: the
// bubble's clock only moves past an instant once every goroutine due at it
// has run and blocked again, so an event due at the same instant as a poll
// (a worker's 50ms timer and the 50th 1ms poll) is always seen, whatever
// order the goroutines woke in.
func (c *waitConfig) now() time.Time {
	t := time.Now()
	if c.clock == VirtualClock {
		t = t.Add(-1)
	}
	return t
}

// sleepUntil sleeps until the next observation: until, or woken being
// closed, or, when poll is set, one poll interval after now, whichever
// comes first.
func (c *waitConfig) sleepUntil(now, until time.Time, woken <-chan struct{}, poll bool) {
	d := until.Sub(now)
	if poll && c.poll < d {
		d = c.poll
	}
	if d <= 0 {
		d = 1
	}
	target := now.Add(d)
	if c.clock == VirtualClock {
		target = target.Add(1)
	}
	if woken == nil {
		time.Sleep(time.Until(target))
		return
	}
	timer := time.NewTimer(time.Until(target))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-woken:
		if c.clock == VirtualClock {
			time.Sleep(1) // let the rest of this instant run first (see now)
		}
	}
}

// outOfScope says why e does not count, or "" when it does.
func (c *waitConfig) outOfScope(e Event) string {
	if c.session != nil && e.Session != *c.session {
		return fmt.Sprintf("session %q, want %q", e.Session, *c.session)
	}
	if !c.since.IsZero() && !e.At.IsZero() && e.At.Before(c.since) {
		return fmt.Sprintf("before the turn started (%s earlier)", c.since.Sub(e.At))
	}
	return ""
}

// guard returns the guard a counted match breaks, or "".
func (c *waitConfig) guard(e Event) string {
	if c.queue != nil && e.Queue != *c.queue {
		return fmt.Sprintf("routing guard: on queue %q, want %q", e.Queue, *c.queue)
	}
	return ""
}

// scope describes the scope and guards for messages.
func (c *waitConfig) scope() string {
	var parts []string
	if c.queue != nil {
		parts = append(parts, fmt.Sprintf(" on queue %q", *c.queue))
	}
	if c.session != nil {
		parts = append(parts, fmt.Sprintf(" from session %q", *c.session))
	}
	if !c.since.IsZero() {
		parts = append(parts, " since the turn started")
	}
	return strings.Join(parts, "")
}

// Eventually polls cond until it returns nil and fails t if it still
// returns an error after within; the message says what was expected
// (Expecting) and quotes the last error, so cond should say what it saw
// ("1 ticket open, want 2"). With WakeOn(stream) it looks again on each of
// the stream's events instead of polling. It reports whether cond held.
func Eventually(t TB, cond func() error, within time.Duration, opts ...WaitOption) bool {
	t.Helper()
	if cond == nil {
		panic("testkit: Eventually with a nil condition")
	}
	cfg := newWaitConfig(opts)
	var wakes waker
	if cfg.wakeOn != nil {
		w, ok := cfg.wakeOn.(waker)
		if !ok {
			panic(fmt.Sprintf("testkit: WakeOn(%T): the source cannot wake waiters; use a *testkit.Stream or poll", cfg.wakeOn))
		}
		wakes = w
	}
	want := cfg.expect
	if want == "" {
		want = "the condition to hold"
	}
	start := cfg.begin()
	deadline := start.Add(within)
	for {
		var woken <-chan struct{}
		cancel := func() {}
		if wakes != nil {
			woken, cancel = cfg.watch(cfg.wakeOn)
		}
		err := cond()
		if err == nil {
			cancel()
			return true
		}
		now := cfg.now()
		if !now.Before(deadline) {
			cancel()
			t.Errorf("testkit.Eventually: want %s within %s (%s); still false after %s: %v",
				want, within, cfg.clock, now.Sub(start), err)
			return false
		}
		cfg.sleepUntil(now, deadline, woken, woken == nil)
		cancel()
	}
}

// ExactlyOne waits up to within for the one event of src that match picks,
// in the scope of the options (FromSession, Since), and returns it.
//
// A second counted match fails t at once, listing both. A match that
// breaks a guard (OnQueue) fails t at once, naming the guard, the value it
// wanted and the value it saw. A single match succeeds only when the
// window closes (within after the call) with no second one, or, with
// Settle(d), d after it happened. No match by then fails t, listing the
// events in scope and the matches the scope left out (another session,
// before the turn). Times in messages are relative to the call. On
// virtual time an event due at the very instant the window closes counts.
func ExactlyOne(t TB, src Source, match Matcher, within time.Duration, opts ...WaitOption) (Event, bool) {
	t.Helper()
	if src == nil || match == nil {
		panic("testkit: ExactlyOne with a nil source or matcher")
	}
	cfg := newWaitConfig(opts)
	start := cfg.begin()
	deadline := start.Add(within)
	want := fmt.Sprintf("want exactly one %s%s within %s (%s)", match, cfg.scope(), within, cfg.clock)
	seenAt := map[int]time.Time{} // index in the stream -> first observed
	now := start
	for {
		woken, cancel := cfg.watch(src)
		evs := src.Events()
		var matches, ignored []Event
		var reasons []string
		var firstIdx int
		for i, e := range evs {
			if _, ok := seenAt[i]; !ok {
				seenAt[i] = now
			}
			if !match.Match(e) {
				continue
			}
			if why := cfg.outOfScope(e); why != "" {
				ignored = append(ignored, e)
				reasons = append(reasons, why)
				continue
			}
			if g := cfg.guard(e); g != "" {
				t.Errorf("testkit.ExactlyOne: %s; saw %s: %s", want, e.format(start), g)
				cancel()
				return e, false
			}
			if len(matches) == 0 {
				firstIdx = i
			}
			matches = append(matches, e)
		}
		if len(matches) > 1 {
			t.Errorf("testkit.ExactlyOne: %s; saw %d by %s: %s", want, len(matches), fmtOffset(now.Sub(start)), list(matches, start))
			cancel()
			return matches[1], false
		}
		next := deadline
		if len(matches) == 1 {
			if cfg.settle > 0 {
				at := matches[0].At
				if at.IsZero() || at.After(seenAt[firstIdx]) {
					at = seenAt[firstIdx] // no time, or another clock's: when it was seen
				}
				if end := at.Add(cfg.settle); end.Before(next) {
					next = end
				}
			}
			if !now.Before(next) {
				cancel()
				return matches[0], true
			}
		} else if !now.Before(deadline) {
			msg := fmt.Sprintf("testkit.ExactlyOne: %s; saw none", want)
			var inScope []Event
			for _, e := range evs {
				if cfg.outOfScope(e) == "" {
					inScope = append(inScope, e)
				}
			}
			msg += fmt.Sprintf("; %d other events in scope", len(inScope))
			if len(inScope) > 0 {
				msg += ": " + list(inScope, start)
			}
			for i, e := range ignored {
				msg += fmt.Sprintf("; left out %s: %s", e.format(start), reasons[i])
			}
			t.Errorf("%s", msg)
			cancel()
			return Event{}, false
		}
		cfg.sleepUntil(now, next, woken, woken == nil)
		cancel()
		now = cfg.now()
	}
}

// Quiet waits for src to go quiet: it succeeds once quietFor has passed
// with no new event in scope (FromSession, Since; guards do not apply),
// counting from the call or from the last new event, and fails t if the
// events keep coming until maxWait after the call. It reports whether the
// stream went quiet. Events already in the stream at the call are not new.
func Quiet(t TB, src Source, quietFor, maxWait time.Duration, opts ...WaitOption) bool {
	t.Helper()
	if src == nil {
		panic("testkit: Quiet with a nil source")
	}
	if quietFor <= 0 || maxWait < quietFor {
		panic(fmt.Sprintf("testkit: Quiet(%s, %s): want 0 < quietFor <= maxWait", quietFor, maxWait))
	}
	cfg := newWaitConfig(opts)
	start := cfg.begin()
	deadline := start.Add(maxWait)
	old := len(src.Events())
	_, stamped := src.(*Stream)
	seenAt := map[int]time.Time{} // index in the stream -> first observed
	now := start
	for {
		woken, cancel := cfg.watch(src)
		evs := src.Events()
		last := start
		var fresh []Event
		for i := old; i < len(evs); i++ {
			e := evs[i]
			if _, ok := seenAt[i]; !ok {
				seenAt[i] = now
			}
			if cfg.outOfScope(e) != "" {
				continue
			}
			fresh = append(fresh, e)
			at := e.At
			if at.IsZero() || at.After(seenAt[i]) {
				at = seenAt[i] // no time, or a time in the future: when it was seen
			}
			if at.After(last) {
				last = at
			}
		}
		quietUntil := last.Add(quietFor)
		if !now.Before(quietUntil) {
			cancel()
			return true
		}
		if !now.Before(deadline) {
			t.Errorf("testkit.Quiet: want no new event%s for %s within %s (%s); saw %d new events, the last %s before the deadline: %s",
				cfg.scope(), quietFor, maxWait, cfg.clock, len(fresh), now.Sub(last), fresh[len(fresh)-1].format(start))
			cancel()
			return false
		}
		next := quietUntil
		if deadline.Before(next) {
			next = deadline
		}
		// A Stream stamps its events, so quiet is measured from their
		// times: no need to look between deadlines.
		cfg.sleepUntil(now, next, woken, woken == nil && !stamped)
		cancel()
		now = cfg.now()
	}
}

func fmtOffset(d time.Duration) string {
	if d < 0 {
		return "-" + (-d).String()
	}
	return "+" + d.String()
}

// list renders up to 5 events, then a count of the rest.
func list(evs []Event, base time.Time) string {
	const limit = 5
	var parts []string
	for i, e := range evs {
		if i == limit {
			parts = append(parts, fmt.Sprintf("and %d more", len(evs)-limit))
			break
		}
		parts = append(parts, e.format(base))
	}
	return strings.Join(parts, ", ")
}
