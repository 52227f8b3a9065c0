package runtime

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A tool that calls another tool on its own goroutine (an in-process MCP
// client: close_all calls set_status for each ticket) waits, inside its
// body, for the nested call held at its gate. Only the scheduler moves it:
// the scenario is quiet. Before, the grace a tool body gets to be answered
// by a worker (bodyGrace) counted it busy, and each release of such an
// agent waited 100 ms for it (an mcp-go help desk's suite took 9.6 s
// instead of 1.0 s).
func TestToolBodyParkedAtANestedGateIsQuiet(t *testing.T) {
	w := newWorld(true)
	s := newScheduler(nil, false, nil)
	s.rec = newRecorder("nested", Fault{}, nil)
	nested := &Call{op: &Op{Name: "set_status"}, inv: &invocation{n: 1}, sched: &callSched{label: "set_status 1"}}
	gid := make(chan uint64)
	go func() {
		id := goroutineID()
		w.body(id, true) // the outer call's body runs on this goroutine
		gid <- id
		s.Wait(nested, PointStart)
	}()
	id := <-gid
	waitFor(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.waiting) == 1
	})
	defer close(s.waiting[0].ch) // let it go
	// Blocked at the gate, not merely on the way to it.
	waitFor(t, func() bool {
		for _, g := range snapshotGoroutines() {
			if g.id == id {
				return g.state != "running" && g.state != "runnable"
			}
		}
		return false
	})
	// The world counts every goroutine made since it began: in a run of
	// the package, one that an earlier test left to end (a timer's
	// callback, a server's connection) may be busy a moment, the longer
	// on a loaded machine. Such a goroutine is looked at again; only the
	// body's own, named busy, fails the test.
	since := w.bodySince(id)
	own := fmt.Sprintf("goroutine %d ", id)
	for {
		if time.Since(since) > bodyGrace/2 {
			t.Skip("the machine is too slow to look within the grace of the tool body")
		}
		quiet, why, _ := w.quiet(0, heldCalls{})
		if quiet {
			return
		}
		if strings.HasPrefix(why, own) {
			t.Fatalf("a tool body parked at a nested call's gate is not quiet: %s", why)
		}
		time.Sleep(time.Millisecond)
	}
}

// A tool that calls another tool through a client whose server runs it on
// a goroutine of its own (a go-sdk MCP session in the process) waits for
// the answer inside its body, blocked on a channel, while the nested call
// is parked at its gate. The nested call reached the gate after the body
// began, and has waited there a moment (arrivalSettle): it excuses the
// body, which is otherwise busy within its grace.
// A call that was at a gate before the body began (its sibling in the
// round) excuses nothing.
func TestToolBodyWaitingForANestedCallElsewhereIsQuiet(t *testing.T) {
	w := newWorld(true)
	answer := make(chan struct{})
	gid := make(chan uint64)
	go func() {
		id := goroutineID()
		w.body(id, true)
		gid <- id
		<-answer // the client waits for the server's answer
	}()
	id := <-gid
	defer close(answer)
	waitFor(t, func() bool {
		for _, g := range snapshotGoroutines() {
			if g.id == id {
				return g.state == "chan receive"
			}
		}
		return false
	})
	since := w.bodySince(id)
	if time.Since(since) > bodyGrace/2 {
		t.Skip("the machine is too slow to look within the grace of the tool body")
	}
	if quiet, why, _ := w.quiet(0, heldCalls{arrivals: []time.Time{since.Add(-time.Millisecond)}}); quiet || !strings.Contains(why, bodyWait) {
		t.Fatalf("a call at a gate since before the body began excused it: quiet=%v %s", quiet, why)
	}
	arrivals := []time.Time{since.Add(-time.Millisecond), since.Add(time.Microsecond)}
	if quiet, _, _ := w.quiet(0, heldCalls{arrivals: arrivals}); quiet && time.Since(arrivals[1]) < arrivalSettle {
		t.Fatal("a call that reached its gate a moment ago excused the body: its siblings may be on their way")
	}
	time.Sleep(time.Until(arrivals[1].Add(arrivalSettle)))
	if time.Since(since) > bodyGrace/2 {
		t.Skip("the machine is too slow to look within the grace of the tool body")
	}
	if quiet, why, _ := w.quiet(0, heldCalls{arrivals: arrivals}); !quiet {
		t.Fatalf("a body waiting for the nested call that reached its gate after it began is not quiet: %s", why)
	}
}
