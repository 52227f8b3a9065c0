package testkit_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentidem/agentidem-go/testkit"
)

// failPrinter is a testkit.TB that prints failures up to their timings
// (real-time runs vary by microseconds); in a real test, pass t.
type failPrinter struct{}

func (failPrinter) Helper()             {}
func (failPrinter) Name() string        { return "TestTicketWorker" }
func (failPrinter) Logf(string, ...any) {}
func (failPrinter) Errorf(f string, args ...any) {
	msg, _, _ := strings.Cut(fmt.Sprintf(f, args...), " by +")
	fmt.Println("FAIL:", msg)
}

// A background worker opens a ticket 10ms after the agent's turn, and the
// test waits for exactly one, on the disputes queue, from this session.
// In a test, wrap the body in synctest.Test(t, func(t *testing.T) {...})
// and the same calls run on virtual time, in microseconds.
func ExampleExactlyOne() {
	events := testkit.NewStream()
	turn := time.Now()
	done := make(chan struct{})
	go func() { // the worker
		defer close(done)
		time.Sleep(10 * time.Millisecond)
		events.Emit(testkit.Event{Kind: "ticket.opened", Subject: "D-1001", Queue: "disputes", Session: "s-1"})
	}()

	e, ok := testkit.ExactlyOne(failPrinter{}, events, testkit.KindFor("ticket.opened", "D-1001"), 5*time.Second,
		testkit.OnQueue("disputes"), testkit.FromSession("s-1"), testkit.Since(turn),
		testkit.Settle(20*time.Millisecond)) // real time: do not wait out the whole window
	<-done
	fmt.Println(ok, e.Kind, e.Subject, e.Queue)
	fmt.Println("quiet:", testkit.Quiet(failPrinter{}, events, 20*time.Millisecond, time.Second))
	// Output:
	// true ticket.opened D-1001 disputes
	// quiet: true
}

// An agent that resubmits after a timeout gets two tickets: the second
// fails ExactlyOne as soon as it arrives.
func ExampleExactlyOne_duplicate() {
	events := testkit.NewStream()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2 {
			time.Sleep(10 * time.Millisecond)
			events.Emit(testkit.Event{Kind: "ticket.opened", Subject: "D-1001", Queue: "disputes"})
		}
	}()
	_, ok := testkit.ExactlyOne(failPrinter{}, events, testkit.KindFor("ticket.opened", "D-1001"), 5*time.Second,
		testkit.OnQueue("disputes"), testkit.WithClock(testkit.RealClock))
	<-done
	fmt.Println(ok)
	// Output:
	// FAIL: testkit.ExactlyOne: want exactly one ticket.opened D-1001 on queue "disputes" within 5s (real time); saw 2
	// false
}
