package runtime

import (
	"context"
	"errors"
	"sync/atomic"
)

// A State that reads the database through a pool of one connection,
// which the agent's transaction held across a traced call, waited for
// that connection for good (red team rtW #4: pgxpool with MaxConns 1, a
// query on context.Background()). State ran on the call's goroutine, so
// the agent, waiting for State, could not return when the stall watch
// cancelled it, and its transaction kept the connection past the verdict:
// the test's own pool.Close() waited for it until go test's -timeout.
// State takes no context, so nothing the harness cancels could end its
// wait.
//
// So State runs on a goroutine of its own, which the call waits for until
// the run is aborted (a stall: judge.halt). Then the call stops waiting,
// its tool runs on the cancelled context of the agent, the agent can
// return and release what it held, and the State left waiting gets it and
// ends. The run was already judged stalled, naming State's wait
// (world.blocked); the snapshot it gave up on is no finding of its own.

// errStateHalted is the snapshot error of a State the call stopped waiting
// for because the run was aborted.
var errStateHalted = errors.New("State had not returned when the scenario was abandoned")

// halter ends the waits for State of one run (judge.halt), and cancels
// the context Settle is given: Settle runs on the repeated call's
// goroutine too, and one waiting for what the agent holds (a connection
// of a pool of one) kept the agent from returning as State did; it was
// given the suite's context, which a stall does not cancel.
type halter struct {
	ctx    context.Context
	cancel context.CancelFunc
	// gaveUp says a call stopped waiting for a State: what it would have
	// seen is left out (recorder.trace notes it).
	gaveUp atomic.Bool
	// w is the scenario's world, which starts State's goroutines as the
	// harness's own (world.start): started unannounced, each was a
	// goroutine the process made that the world could not account for,
	// and every invocation then took a stack snapshot of the process to
	// look for its context's callbacks (settleAfterFuncs), and so did the
	// judging of every repeat: BenchmarkEffects/state went from 1.1 to
	// 2.0 ms a suite with one processor, from 1.6 to 3.9 with two.
	w *world
}

func newHalter(parent context.Context) *halter {
	h := &halter{}
	h.ctx, h.cancel = context.WithCancel(parent)
	return h
}

// stop ends them; later snapshots of the run give up at once.
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

// waitsForState reports whether g is a call waiting for a State that runs
// on a goroutine of its own: none does now (readState), and the call's own
// goroutine is the one the stall names, inside State.
func (g *gInfo) waitsForState() bool { return false }
