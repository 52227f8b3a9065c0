package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
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

// readState calls State on a goroutine of its own, marked as a hook's as
// the caller is (a tool it calls is the harness's), and returns its
// value, or the error of its panic, or errStateHalted once the run is
// aborted while it waits.
func (j *judge) readState() (any, error) {
	type out struct {
		v   any
		err error
	}
	done := make(chan out, 1)
	read := func() {
		var o out
		defer func() { done <- o }()
		defer func() {
			if v := recover(); v != nil {
				o.err = statePanicError(v)
			}
		}()
		defer enterHook(false).leave()
		o.v = j.state()
	}
	if j.halt != nil && j.halt.w != nil {
		j.halt.w.start(read, nil)
	} else {
		goHarness(read)
	}
	var halt <-chan struct{}
	if j.halt != nil {
		halt = j.halt.ctx.Done()
	}
	select {
	case o := <-done:
		return o.v, o.err
	case <-halt:
		j.halt.gaveUp.Store(true)
		return nil, errStateHalted
	}
}

// waitsForState reports whether g is a call waiting in readState for its
// State goroutine: a stall names that goroutine's wait, not this one.
func (g *gInfo) waitsForState() bool {
	return g.state == "select" && len(g.funcs) > 0 && slices.ContainsFunc(g.funcs[:min(len(g.funcs), 3)], func(f string) bool {
		return strings.HasSuffix(f, "runtime.(*judge).readState")
	})
}
