package testkit

import (
	"context"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"

	"github.com/agentidem/agentidem-go/runtime"
)

// What a t.Fatal inside a callback does to a suite. State, Setup, Teardown
// and Invariant are closures that often capture the test's t, and
// t.Fatal, t.FailNow and require.X(t, ...) in them end the goroutine that
// runs them with runtime.Goexit, which nothing can stop or recover. The
// suite runs them in goroutines that are not the test's: a scenario's
// subtest, a delivery of the agent, one of the harness. Ending a subtest's
// goroutine by the parent's FailNow made go test abort the test ("subtest
// may have called FailNow on a parent test") with no summary and no report
// (red team rtV #20); ending an agent's, the suite judged what was left.
//
// So testkit runs each such callback under a guard that sees the goroutine
// end (the callback neither returned nor panicked) and records where, and
// from then on the suite stops: the callbacks are not called again (State
// panics, the others return an error, without running the user's code),
// no further scenario runs, and the test fails with the site, the
// scenario it happened in and what to write instead; the summary is
// printed and the report written all the same, the scenarios not run
// counted inconclusive ("not run"). A t.SkipNow (t.Skip) ends the test as
// it would, skipped, with no error.

// callbackExits records the first callback of a suite that ended its
// goroutine.
type callbackExits struct {
	mu       sync.Mutex
	scenario string // the scenario running now
	first    *callbackExit
}

type callbackExit struct {
	callback string // "State", "Setup", "Invariant \"one ticket\""...
	how      string // "t.FailNow", "t.SkipNow", "runtime.Goexit"
	site     string // file.go:12, the user's frame that called it
	scenario string
}

func (e *callbackExits) running(scenario string) {
	e.mu.Lock()
	e.scenario = scenario
	e.mu.Unlock()
}

func (e *callbackExits) get() *callbackExit {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.first
}

// skipped reports whether the suite stopped because a callback skipped
// the test.
func (x *callbackExit) skipped() bool { return x != nil && x.how == "t.SkipNow" }

// stopped is the error of a callback not called because an earlier one
// ended its goroutine.
func (x *callbackExit) stopped() error {
	return fmt.Errorf("not called: %s ended its goroutine earlier (%s at %s); the suite stopped", x.callback, x.how, x.site)
}

// message is the harness error that fails the test.
func (x *callbackExit) message(notRun int) string {
	where := "in the baseline"
	if x.scenario != "" && x.scenario != runtime.ScenarioBaseline {
		where = "in scenario " + x.scenario
	}
	what := "return an error instead (require/assert's non-fatal forms, or fmt.Errorf)"
	if x.callback == "State" {
		what = "panic instead (panic(fmt.Sprintf(...))): the suite reports a State that panics in the baseline as a misconfiguration, and one that panics later as the State failure it is"
	}
	return fmt.Sprintf("%s called %s at %s %s: a callback the suite calls (State, Setup, Teardown, Invariant) runs in a goroutine of the suite, not in the test's, and %s there ends that goroutine mid-suite (t.Fatal, t.FailNow and require.X(t, ...) all do); %s. The suite stopped there: %d planned scenario(s) did not run and are counted inconclusive",
		x.callback, x.how, x.site, where, x.how, what, notRun)
}

// guard runs call, the user's callback named name, and records it if it
// ended its goroutine. Once any callback of the suite did, call is not
// run: stopped returns what the callback returns instead.
func (e *callbackExits) guard(name string, call func(), stopped func(*callbackExit)) {
	if x := e.get(); x != nil {
		stopped(x)
		return
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		// Not returned: a panic (left to the caller, who recovers it
		// as before) or runtime.Goexit. A panic's own frames are on
		// the stack too, so only a Goexit frame tells.
		how, site, ok := goexitSite()
		if !ok {
			return
		}
		e.mu.Lock()
		if e.first == nil {
			e.first = &callbackExit{callback: name, how: how, site: site, scenario: e.scenario}
		}
		e.mu.Unlock()
	}()
	call()
	returned = true
}

// goexitSite reads, from a deferred function run by runtime.Goexit, how
// the goroutine is ending (t.FailNow, t.SkipNow, or a plain Goexit) and
// the user's frame that called it: the first below Goexit that is not
// the testing package's, the Go runtime's or testify's.
func goexitSite() (how, site string, ok bool) {
	var pcs [64]uintptr
	frames := goruntime.CallersFrames(pcs[:goruntime.Callers(2, pcs[:])])
	how = "runtime.Goexit"
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.Goexit":
			ok = true
		case !ok:
		case strings.HasSuffix(f.Function, ").SkipNow"):
			how = "t.SkipNow"
		case strings.HasSuffix(f.Function, ").FailNow") && how != "t.SkipNow":
			how = "t.FailNow"
		case strings.HasPrefix(f.Function, "testing."), strings.HasPrefix(f.Function, "runtime."),
			strings.Contains(f.Function, "github.com/stretchr/testify/"):
		default:
			return how, fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line), true
		}
		if !more {
			return how, "an unknown line", ok
		}
	}
}

// exits returns the suite's record of callbacks that ended their
// goroutine, made on first use.
func (s *settings) exits() *callbackExits {
	if s.exited == nil {
		s.exited = &callbackExits{}
	}
	return s.exited
}

// stateGuard is the runtime.StateGuard of a suite's State.
func stateGuard(e *callbackExits) runtime.Option {
	return runtime.StateGuard(func(call func()) (err error) {
		e.guard("State", call, func(x *callbackExit) { err = x.stopped() })
		return err
	})
}

// guardedHook wraps a Setup or Teardown.
func guardedHook(e *callbackExits, name string, fn func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) (err error) {
		e.guard(name, func() { err = fn(ctx) }, func(x *callbackExit) { err = x.stopped() })
		return err
	}
}

// guardedInvariant wraps an Invariant.
func guardedInvariant(e *callbackExits, name string, fn func(*runtime.Trace) error) func(*runtime.Trace) error {
	return func(tr *runtime.Trace) (err error) {
		e.guard(fmt.Sprintf("Invariant %q", name), func() { err = fn(tr) }, func(x *callbackExit) { err = x.stopped() })
		return err
	}
}
