package runtime

import (
	"context"
	"fmt"
	"sync"
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
// A call that never arrives holds the scenario until the caller's wait for
// its answer ends (the function is called then, as Propagate defers it) or
// the stall bound: a stall, reported as such.
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
	s.mu.Unlock()
	inv.rec.progress.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.transit--
			s.sent++
			s.mu.Unlock()
			inv.rec.progress.Add(1)
			s.notify()
		})
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
