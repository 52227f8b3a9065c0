package runtime

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Sending says that the caller, with the agent's ctx, hands a tool call to a
// server in this process over a transport, and returns the function to call
// once the call has reached the server (its middleware received it) or the
// caller's wait for it has ended, whichever comes first; it may be called
// more than once. An adapter's client side calls it (adapters/mcp/gosdk's
// Propagate), its server side calls the function (adapters/mcp.Arrived).
// Outside a run, and outside a scenario with a scheduler, it does nothing.
//
// Why: on real time, the scheduler takes the agent for quiet when each of
// the scenario's goroutines (those created since it began, and older ones
// that reached a gate) is parked at a gate or blocked. A transport whose
// goroutines are older than the scenario (an MCP session that Setup
// connected once and every scenario shares) carries the call on one of
// them: go-sdk's connection reader takes the request off the in-memory
// pipe and only then starts the goroutine that runs the handler. Meanwhile
// the agent's goroutine waits on a channel for the answer, and the
// scenario looked quiet with the call on its way: the calls of one model
// turn that had reached their gates played a round without the others, so
// which calls of the turn were in flight together, and in which order they
// ran, were decided by real time, and so were the baseline's path (a call
// that needs another's effect failed and was retried, or not) and the
// fault scenarios planned from it (fault_not_triggered in some runs). With
// the call counted as in transit, the scheduler waits for it to arrive.
//
// A call that has not arrived transitGrace after the last hand-off or
// arrival, with the agent otherwise quiet, is taken as one the server does
// not take yet: a server that runs one call at a time reads the next
// request only once the call it runs, parked at its gate, returns. The
// round is then played without it, as it would be on every run (the call
// cannot arrive until the round is played), and the trace's notes say so.
func Sending(ctx context.Context) (arrived func()) {
	if !Enabled() || ctx == nil {
		return func() {}
	}
	var inv *invocation
	switch v := ctx.Value(enclosingKey{}).(type) {
	case *Call:
		inv = v.inv
	case *invocation:
		inv = v
	}
	if inv == nil || inv.rec.sched == nil || inv.rec.stopped.Load() {
		return func() {}
	}
	s := inv.rec.sched
	s.mu.Lock()
	s.transit++
	s.sent++
	s.sentAt = time.Now()
	s.mu.Unlock()
	inv.rec.progress.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.transit--
			s.sent++
			s.sentAt = time.Now()
			s.mu.Unlock()
			inv.rec.progress.Add(1)
			s.notify()
		})
	}
}

// transitGrace is how long a hand-off may take before the call is taken as
// one the server does not take yet: a hand-off over an in-process pipe takes
// microseconds, and a loaded machine may delay it by tens of milliseconds.
var transitGrace = 250 * time.Millisecond

// transitHeldLocked returns the calls in transit that hold the agent from
// quiet: none once transitGrace passed since the last hand-off or arrival;
// lapsed is then the calls let go, for noteLapsed, which the caller calls
// once s.mu is let go. s.mu is held.
func (s *scheduler) transitHeldLocked() (held, lapsed int) {
	if s.transit == 0 || time.Since(s.sentAt) < transitGrace {
		return s.transit, 0
	}
	return 0, s.transit
}

// noteLapsed tells in the trace's notes that n calls in transit were let go
// (transitHeldLocked).
func (s *scheduler) noteLapsed(n int) {
	if n > 0 {
		s.rec.addNoteOnce(fmt.Sprintf("%d call(s) handed to a server in the process (runtime.Sending) did not reach it within %v while the agent was otherwise quiet: taken as calls a server that takes one at a time reads only after the call it runs returns, the round was played without them", n, transitGrace))
	}
}

// inTransitLocked describes the calls sent to a server in the process that have
// not reached it, for a stall report; s.mu is held.
func (s *scheduler) inTransitLocked() string {
	if s.transit == 0 {
		return ""
	}
	return fmt.Sprintf("%d call(s) handed to a server in the process (runtime.Sending) have not reached it", s.transit)
}
