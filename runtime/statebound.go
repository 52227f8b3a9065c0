package runtime

import (
	"context"
)

// A State that reads the database through a pool of one connection,
// which the agent's transaction held across a traced call, waited for
// that connection for good (red team rtW #4: pgxpool with MaxConns 1, a
// query on context.Background()). State ran on the call's goroutine, so
// the agent, waiting for State, could not return when the stall watch
// cancelled it, and its transaction kept the connection past the verdict:
// the test's own pool.Close() waited for it until go test's -timeout.
// State takes no context, so nothing the harness cancels could end its
// wait: it still runs on the call's goroutine (readState, below, says
// why), and the stall names its wait. StateContext's fn is given the
// halter's context, which a stall cancels, so that a query on it returns
// and the agent, cancelled, can return.

// halter cancels the context Settle is given, at a stall and when the
// run ends (judge.halt): Settle runs on the repeated call's
// goroutine too, and one waiting for what the agent holds (a connection
// of a pool of one) kept the agent from returning as State did; it was
// given the suite's context, which a stall does not cancel.
type halter struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newHalter(parent context.Context) *halter {
	h := &halter{}
	h.ctx, h.cancel = context.WithCancel(parent)
	return h
}

// stop cancels Settle's context.
func (h *halter) stop() {
	if h != nil {
		h.cancel()
	}
}

// readState calls State on the goroutine of the call it judges, marked
// as a hook's (a tool it calls is the harness's), and returns its value,
// or the error of its panic.
//
// It ran State on a goroutine of its own, which the call stopped waiting
// for at a stall (red team rtW #4: a State that waited for the pool
// connection the agent's transaction held kept the agent from returning,
// and the test's pool.Close() hung until -timeout). That made the judging
// of a fire-and-forget tool's calls flaky: the State goroutine, readied
// after the one the tool started, ran first and handed the processor back
// to the call, the agent returned before the tool's goroutine began its
// call, and lost_acknowledgement on that call read fault_not_triggered in
// 11 of 60 runs of TestNotificationSentFromAToolsGoroutineIsTheScenarios
// under -race, against none of 90 before. State runs on the call's
// goroutine again; a State that waits for what the agent holds is named
// by the stall, which says to read the world through what the agent
// cannot hold, and the agent is left running, as the stall says.
func (j *judge) readState() (v any, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = statePanicError(x)
		}
	}()
	defer enterHook(false).leave()
	return j.state(), nil
}
