package runtime

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// StateGuard has the judge call State through g: g calls call, which runs
// State, once, and returns nil; or it returns an error without calling it,
// which the judge takes as State's failure (as a panic in State). The
// suite names State by the function given to State, not by g's closure.
//
// testkit uses it to notice a State that ends its goroutine (t.Fatal on a
// t it captured, which runtime.Goexit nothing can stop) and to stop the
// suite there with a clear error; most users need it not.
func StateGuard(g func(call func()) error) Option {
	return optionFunc(func(c *config) { c.guard = g })
}

// guardedState returns State as the judge calls it: through StateGuard's
// function, if one was given, and timed (stateClock).
func (c *config) guardedState(ctx context.Context) func() any {
	state, g, clock := c.state, c.guard, c.stateClock
	if state == nil {
		return nil
	}
	if fn := c.stateCtx; fn != nil {
		state = func() any { return callStateContext(fn, ctx) }
	}
	if g != nil {
		inner := state
		state = func() (v any) {
			if err := g(func() { v = inner() }); err != nil {
				panic(err)
			}
			return v
		}
	}
	if clock == nil {
		return state
	}
	return func() any {
		start := time.Now()
		v := state()
		// A call the scenario stalled in (ctx, the halter's, ended)
		// took the stall's bound, not State's cost: the note said
		// "keep it cheap" of a State that waited 10 s for the pool
		// connection the agent held (red team rtW #4's agent under
		// StateContext).
		if ctx.Err() == nil {
			clock.add(start)
		}
		return v
	}
}

// stateClock counts State's calls and the time they took, for the note
// that says where a suite's time went when State took most of it
// (Suite.stateNote): a State that reads a remote database, or every row
// of a table, is called several times for each agent run (before and
// after each write it judges, at the run's end), and a 200 ms one made a
// suite of 0.3 s take 25 s with no word of why (red team rtV #4). One
// time.Now pair and two atomic adds per call: next to nothing beside the
// snapshot's encoding.
type stateClock struct {
	calls atomic.Int64
	took  atomic.Int64 // nanoseconds
}

func (c *stateClock) add(start time.Time) {
	c.calls.Add(1)
	c.took.Add(int64(time.Since(start)))
}

// stateShare is the share of a suite's time above which State's time is
// noted, when it is stateNoted or more.
const (
	stateShare = 0.5
	stateNoted = time.Second
)

// stateNote says, when State took most of the suite's time (more than
// stateShare of it, stateNoted at least), how often it was called and
// what it cost; "" otherwise, and without State.
func (s *Suite) stateNote(took time.Duration) string {
	clock := s.cfg.stateClock
	if clock == nil {
		return ""
	}
	n, in := clock.calls.Load(), time.Duration(clock.took.Load())
	if in < stateNoted || float64(in) < stateShare*float64(took) {
		return ""
	}
	per := ""
	if s.runs > 0 {
		per = fmt.Sprintf(" (%.1f per agent run, %d runs)", float64(n)/float64(s.runs), s.runs)
	}
	return fmt.Sprintf("State took %s of the suite's %s (%d%%): it was called %d times%s, %s a call on average; the suite calls it before and after each write it judges and at the end of each run, on the goroutine of the call, so its cost is paid several times per agent run: keep it cheap (read only what the tools change, from the fake or the test database in the process, rather than every row or a remote service)",
		in.Round(time.Millisecond), took.Round(time.Millisecond), int(100*float64(in)/float64(took)), n, per, (in / time.Duration(max(n, 1))).Round(time.Millisecond))
}

// callStateContext calls StateContext's fn: a frame of its own, by which
// the stall tells a State whose context ended at it (goroutines.go).
//
//go:noinline
func callStateContext(fn func(context.Context) any, ctx context.Context) any {
	return fn(ctx)
}
