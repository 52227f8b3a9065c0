package runtime

import (
	"flag"
	"os"
	goruntime "runtime"
	"strconv"
	"sync"
	"time"
)

// A suite is a chain of hand-offs: the harness starts a goroutine for a
// Setup or an invocation and waits for it, the invocation's calls wait at
// their gates for the harness, and each side wakes the other. With one
// processor each hand-off is a switch between goroutines on one thread.
// With more, the Go scheduler wakes an idle processor's thread for every
// goroutine made ready (a futex call), and a goroutine that another thread
// picks up waits for that thread to wake: on a machine of two CPUs the
// ten-write suite took 1.7 times as long with GOMAXPROCS=2 as with 1
// (TestMeasureSuite), for the same work, and the stack dumps of gated
// scenarios, which stop the world, cost twice as much. A suite has no use
// for a second processor: the harness orders the agent's calls itself and
// runs one scenario at a time.
//
// So while a single suite runs, the process has one processor
// (runtime.GOMAXPROCS(1)), and gets back what it had procsRaiseDelay after
// the suite reports, unless another suite started meanwhile: each change
// stops the world, and the two cost a suite of seven scenarios as much as
// the processor saved it, where a test binary's suites follow one another
// within microseconds. While two or more run at once (tests with
// t.Parallel), the processors are the program's again at once, so that
// the suites run side by side; when one of them is left, it has one
// processor again.
//
// The processors are left alone when GOMAXPROCS is set in the environment,
// when go test was given -cpu, and with AGENTIDEM_PROCS=default. A value
// the program sets while a suite runs is kept. Going back, the runtime's
// own default (and its updates when the CPU limit of a container changes)
// is restored when that was what the process had, which
// runtime.SetDefaultGOMAXPROCS tells.
var procPace struct {
	mu      sync.Mutex
	suites  int         // suites running
	lowered bool        // GOMAXPROCS was set to 1 by procsUp
	restore int         // the value it had before
	raise   *time.Timer // gives it back when no suite ran for procsRaiseDelay
}

// procsRaiseDelay is how long the process keeps one processor after the
// last running suite reported.
var procsRaiseDelay = 2 * time.Millisecond

// maxProcs and defaultMaxProcs are runtime.GOMAXPROCS and
// runtime.SetDefaultGOMAXPROCS; tests replace them.
var (
	maxProcs        = goruntime.GOMAXPROCS
	defaultMaxProcs = goruntime.SetDefaultGOMAXPROCS
)

// procsLeftAlone reports whether the user chose the processors: GOMAXPROCS
// in the environment, go test -cpu, or AGENTIDEM_PROCS=default.
func procsLeftAlone() bool {
	if n, err := strconv.Atoi(os.Getenv("GOMAXPROCS")); (err == nil && n > 0) || os.Getenv("AGENTIDEM_PROCS") == "default" {
		return true // a GOMAXPROCS the runtime takes: a positive number
	}
	if f := flag.Lookup("test.cpu"); f != nil && f.Value.String() != "" {
		return true
	}
	return false
}

// procsUp counts a suite that starts running: the only one running gets
// the process to itself on one processor; a second one gives the program
// its processors back.
func procsUp() {
	procPace.mu.Lock()
	defer procPace.mu.Unlock()
	procPace.suites++
	if procPace.raise != nil {
		procPace.raise.Stop()
	}
	switch procPace.suites {
	case 1:
		lowerProcs()
	case 2:
		raiseProcs()
	}
}

// procsDown counts a suite that reported.
func procsDown() {
	procPace.mu.Lock()
	defer procPace.mu.Unlock()
	procPace.suites--
	switch procPace.suites {
	case 0:
		if !procPace.lowered {
			return
		}
		if procPace.raise == nil {
			procPace.raise = time.AfterFunc(procsRaiseDelay, raiseIdleProcs)
		} else {
			procPace.raise.Reset(procsRaiseDelay)
		}
	case 1:
		lowerProcs()
	}
}

// raiseIdleProcs gives the program its processors back, unless a suite
// started since the timer was set.
func raiseIdleProcs() {
	procPace.mu.Lock()
	defer procPace.mu.Unlock()
	if procPace.suites == 0 {
		raiseProcs()
	}
}

func lowerProcs() {
	if procPace.lowered || procsLeftAlone() {
		return
	}
	if prev := maxProcs(1); prev > 1 {
		procPace.lowered, procPace.restore = true, prev
	}
}

func raiseProcs() {
	if !procPace.lowered {
		return
	}
	procPace.lowered = false
	if maxProcs(0) != 1 {
		return // the program set a value of its own meanwhile: keep it
	}
	defaultMaxProcs()
	if maxProcs(0) != procPace.restore {
		maxProcs(procPace.restore) // the program's own value, not the default
	}
}
