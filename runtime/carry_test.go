package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// busLedger models a tool served over a message bus in the process
// (NATS request-reply, red team rtU #3), with channels: Setup starts the
// ledger's responder, which takes requests off the bus on a goroutine of
// its own and makes the traced refund with a context of its own, since
// no Go context crosses the bus. The ledger refunds once per request id.
type busLedger struct {
	carry bool // the agent puts runtime.Token in the headers; the responder Resolves it

	bus  chan busMsg
	done chan struct{}
	mu   sync.Mutex
	seen map[string]bool
	refs []string
}

// busMsg is a request on the bus: a payload and headers, as a message
// bus carries them, and where the answer goes.
type busMsg struct {
	order, reqID string
	headers      map[string]string
	reply        chan error
}

var opBusRefund = &runtime.Op{Name: "refund", Kind: runtime.KindWrite, Params: []string{"order", "req_id"}}

// serve is the Setup: a fresh ledger and its responder.
func (l *busLedger) serve(context.Context) error {
	l.mu.Lock()
	l.seen, l.refs = map[string]bool{}, nil
	l.mu.Unlock()
	l.bus, l.done = make(chan busMsg), make(chan struct{})
	go func() {
		defer close(l.done)
		for m := range l.bus {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			stop := func() {}
			if l.carry {
				ctx, stop = runtime.Resolve(ctx, m.headers["agentidem-run"])
			}
			err := l.refund(ctx, m.order, m.reqID)
			stop()
			cancel()
			m.reply <- err
		}
	}()
	return nil
}

func (l *busLedger) stop(context.Context) error { close(l.bus); <-l.done; return nil }

// refund is the traced write.
func (l *busLedger) refund(ctx context.Context, order, reqID string) (err error) {
	args := []any{order, reqID}
	c, _ := runtime.Begin(ctx, opBusRefund, args, args[:1], nil)
	if err := c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	l.mu.Lock()
	if !l.seen[reqID] {
		l.seen[reqID] = true
		l.refs = append(l.refs, order)
	}
	l.mu.Unlock()
	return c.Finish(nil)
}

func (l *busLedger) state() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.refs)
}

var busIDs atomic.Int64

// agent sends the refund request and waits for the answer, and sends
// again when it failed or timed out; keyed, every attempt carries the
// same request id, otherwise a fresh one (the bug).
func (l *busLedger) agent(keyed bool) func(context.Context) error {
	return func(ctx context.Context) error {
		var last error
		for range 3 {
			id := "refund-ord-3"
			if !keyed {
				id = "req-" + strconv.FormatInt(busIDs.Add(1), 10)
			}
			m := busMsg{order: "ord-3", reqID: id, headers: map[string]string{}, reply: make(chan error, 1)}
			if l.carry {
				m.headers["agentidem-run"] = runtime.Token(ctx)
			}
			if err := ctx.Err(); err != nil {
				return err // as a bus client's request does: a crashed delivery sends nothing more
			}
			select {
			case l.bus <- m:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case err := <-m.reply:
				if err == nil {
					return nil
				}
				last = err
			case <-time.After(2 * time.Second):
				last = errors.New("no answer")
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return last
	}
}

func runBus(t *testing.T, keyed, carry bool) *runtime.Report {
	t.Helper()
	l := &busLedger{carry: carry}
	rep, err := runtime.Run(context.Background(), t.Name(), l.agent(keyed),
		runtime.Setup(l.serve), runtime.Teardown(l.stop), runtime.State(l.state))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A tool served over a message bus by a responder Setup started, with a
// context of the responder's own: with one delivery in flight its call is
// the delivery's (the agent waits for the answer); with the two of
// duplicate_delivery/concurrent, nothing tells whose it is. Before, the
// call was refused there, an error that failed the correct agent (its
// ledger dedupes by a request id that every attempt repeats) and told it
// to "pass the agent's ctx to the tool", which no message bus can carry
// (red team rtU #3). Now the scenario is inconclusive, and the warning
// says how to carry the run: runtime.Token in the message's headers,
// runtime.Resolve in the handler. Carried, the correct agent is SAFE and
// the buggy one (a fresh request id per attempt) UNSAFE.
func TestToolServedOverABus(t *testing.T) {
	t.Run("keyed", func(t *testing.T) {
		rep := runBus(t, true, false)
		if !rep.BaselineSucceeded || rep.UnsafeCount != 0 {
			t.Fatalf("baseline %v (%s), %d unsafe: %v", rep.BaselineSucceeded, rep.BaselineFailure, rep.UnsafeCount, rep.Findings)
		}
		if rep.InconclusiveCount != 1 {
			t.Errorf("%d inconclusive, want duplicate_delivery/concurrent's", rep.InconclusiveCount)
		}
		var told, baseline bool
		for _, f := range rep.Findings {
			if f.Code != runtime.CodeContextDetached {
				t.Errorf("finding %s: %s", f.Code, f.Message)
				continue
			}
			if f.Severity == runtime.SeverityError || strings.Contains(f.Message, "pass the agent's ctx") {
				t.Errorf("the correct agent is told: %s: %s", f.Severity, f.Message)
			}
			if strings.Contains(f.Message, "runtime.Token(ctx)") && strings.Contains(f.Message, "runtime.Resolve(ctx, token)") {
				switch {
				case strings.Contains(f.Message, "while 2 deliveries of this run were in flight together") && strings.Contains(f.Message, "a transport that carries no Go context"):
					told = true
				case strings.Contains(f.Message, "while the agent waited for its answer"):
					baseline = true
				}
			}
		}
		if !told || !baseline {
			t.Errorf("not told how to carry the run (concurrent %v, baseline %v): %v", told, baseline, rep.Findings)
		}
	})
	t.Run("keyed carried", func(t *testing.T) {
		rep := runBus(t, true, true)
		if !rep.Safe || rep.InconclusiveCount != 0 || len(rep.Findings) != 0 {
			t.Errorf("safe %v, %d inconclusive, findings %v", rep.Safe, rep.InconclusiveCount, rep.Findings)
		}
	})
	t.Run("fresh carried", func(t *testing.T) {
		rep := runBus(t, false, true)
		if rep.UnsafeCount < 4 {
			t.Errorf("%d unsafe, want the 4 scenarios that repeat the refund: %v", rep.UnsafeCount, rep.Findings)
		}
		for _, f := range rep.Findings {
			if f.Severity == runtime.SeverityError && f.Code != runtime.CodeDuplicateWrite {
				t.Errorf("finding %s: %s", f.Code, f.Message)
			}
		}
	})
	t.Run("fresh", func(t *testing.T) {
		rep := runBus(t, false, false)
		if rep.UnsafeCount == 0 {
			t.Errorf("the buggy agent passed: %v", rep.Findings)
		}
		for _, f := range rep.Findings {
			if f.Severity == runtime.SeverityError && f.Code != runtime.CodeDuplicateWrite {
				t.Errorf("finding %s: %s", f.Code, f.Message)
			}
		}
	})
}

// Token carries a run over a transport that carries no Go context: the
// agent puts it in the request's headers, and the server in the process
// (here a responder on a channel, as a NATS subscription is) takes its
// handler's context from Resolve. The server's calls are then the calls
// of the delivery that sent the request, even with two deliveries in
// flight at once. Outside a run, Token is "" and Resolve returns the
// server's context.
func ExampleToken() {
	type message struct {
		headers map[string]string
		order   string
		reply   chan error
	}
	refund := &runtime.Op{Name: "refund", Kind: runtime.KindWrite, Params: []string{"order"}}
	var (
		bus      chan message
		mu       sync.Mutex
		refunded map[string]int
	)
	serve := func(context.Context) error { // Setup: a fresh ledger and its responder
		bus, refunded = make(chan message), map[string]int{}
		go func() {
			for m := range bus {
				ctx, stop := runtime.Resolve(context.Background(), m.headers["agentidem-run"])
				c, _ := runtime.Begin(ctx, refund, []any{m.order}, []any{m.order}, nil)
				err := c.Start()
				if err == nil {
					mu.Lock()
					refunded[m.order] = 1 // a set: a repeat refunds nothing more
					mu.Unlock()
					err = c.Finish(nil)
				}
				stop()
				m.reply <- err
			}
		}()
		return nil
	}
	agent := func(ctx context.Context) error {
		var err error
		for range 2 { // a failed request is sent again
			if err := ctx.Err(); err != nil {
				return err
			}
			m := message{headers: map[string]string{"agentidem-run": runtime.Token(ctx)}, order: "ord-3", reply: make(chan error, 1)}
			bus <- m
			if err = <-m.reply; err == nil {
				return nil
			}
		}
		return err
	}
	rep, err := runtime.Run(context.Background(), "bus-agent", agent,
		runtime.Setup(serve),
		runtime.Teardown(func(context.Context) error { close(bus); return nil }),
		runtime.State(func() any { mu.Lock(); defer mu.Unlock(); return len(refunded) }))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("safe:", rep.Safe, "inconclusive:", rep.InconclusiveCount, "findings:", len(rep.Findings))
	// Output:
	// safe: true inconclusive: 0 findings: 0
}

// TestREADMEShowsExampleToken keeps the README's excerpts of ExampleToken
// equal to it: each line of a go block under "How a call finds its
// invocation" is a line of this file, in order (indentation aside).
func TestREADMEShowsExampleToken(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("carry_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "### How a call finds its invocation\n")
	if !ok {
		t.Fatal("README.md has no section How a call finds its invocation")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var lines []string
	for _, l := range strings.Split(string(src), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	blocks := 0
	for _, part := range strings.Split(sec, "```go\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		blocks++
		at := 0
		for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
			i := slices.Index(lines[at:], strings.TrimSpace(l))
			if i < 0 {
				t.Errorf("README.md shows a line that ExampleToken lacks (or out of order): %s", l)
				break
			}
			at += i + 1
		}
	}
	if blocks != 2 {
		t.Errorf("%d go blocks in the section, want 2", blocks)
	}
}
