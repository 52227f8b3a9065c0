package runtime

import (
	"fmt"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// A goroutine the agent starts and does not wait for can call a tool after
// the invocation returned and the scenario's run ended: a fire-and-forget
// notification, an audit write, a worker that outlives its job. Such a
// call runs the tool as in production. Recording it in the ended run would
// mix it into a trace that has been judged, and recording it in whichever
// run is active then would give that run a call it did not make. So it is
// counted for the scenario whose goroutine made it (lateCalls), and the
// suite's report says so: that scenario is inconclusive, with a
// goroutine_leak warning naming the tools and call sites, since whatever
// those calls did was never traced, faulted or judged.
//
// The suite takes the counts when its report is assembled (Suite.Report).
// A late call after that has no report left to go to, and is not
// reported: blaming whichever run is active then (another test's) would
// make that run's verdict depend on timing it has no part in.

// lateCalls counts the calls a scenario's goroutines made after its run
// ended. It is small and kept apart from the recorder, so that the
// goroutines ended remembers (endedRoots) hold no trace alive.
type lateCalls struct {
	mu     sync.Mutex
	n      int
	ops    []string  // the op names, as first seen
	sites  []uintptr // the call sites, as first seen (at most maxLateSites)
	closed bool      // the suite's report has been assembled
}

const maxLateSites = 8

// note counts a late call of op from site, until the suite's report is
// assembled.
func (l *lateCalls) note(op *Op, site uintptr) {
	if l == nil {
		return // a run outside any suite (RunTraced): no report to tell
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.n++
	if !slices.Contains(l.ops, op.Name) {
		l.ops = append(l.ops, op.Name)
	}
	if site != 0 && len(l.sites) < maxLateSites && !slices.Contains(l.sites, site) {
		l.sites = append(l.sites, site)
	}
}

// lateWatch keeps the wrappers on their traced path from a suite's first
// scenario to its report, so that a late call made between two scenarios,
// while no run is active, is counted too. A suite dropped without a report
// lets go when it is collected.
type lateWatch struct{ on atomic.Bool }

// watching counts the suites whose watch is on: while one is, a call whose
// context carries no run is looked up among the goroutines ended runs left
// behind even when no run is active (lookup).
var watching atomic.Int32

// watchLate starts the suite's watch, once.
func (s *Suite) watchLate() {
	if s.watch != nil && s.watch.on.Load() {
		return
	}
	if s.watch == nil {
		s.watch = &lateWatch{}
		goruntime.AddCleanup(s, (*lateWatch).stop, s.watch)
	}
	s.watch.on.Store(true)
	watching.Add(1)
	activeRuns.Add(1)
}

func (w *lateWatch) stop() {
	if w.on.CompareAndSwap(true, false) {
		activeRuns.Add(-1)
		watching.Add(-1)
	}
}

// lateRef ties a scenario's result to the late calls of its run.
type lateRef struct {
	res  *Result
	late *lateCalls
}

// reportLate closes the late-call counts of every scenario that ran and
// turns each that is not zero into a goroutine_leak warning on its
// scenario, which it makes inconclusive.
func (s *Suite) reportLate() {
	for _, ref := range s.lates {
		l := ref.late
		l.mu.Lock()
		l.closed = true
		n, ops, sites := l.n, l.ops, l.sites
		l.mu.Unlock()
		if n == 0 {
			continue
		}
		where := make([]string, len(sites))
		for i, pc := range sites {
			where[i] = shortSite(siteOf(pc))
		}
		calls, they, them := strconv.Itoa(n)+" tool calls", "they", "them"
		if n == 1 {
			calls, they, them = "a tool call", "it", "it"
		}
		at := ""
		if len(where) > 0 {
			at = ", at " + strings.Join(where, ", ")
		}
		res := ref.res
		res.Findings = append(res.Findings, Finding{
			Code: CodeGoroutineLeak, Severity: SeverityWarning, Scenario: res.Scenario, Replay: res.Replay,
			Ops: append([]string(nil), ops...),
			Message: fmt.Sprintf("%s (%s%s) came from a goroutine the agent left running, after the scenario's run had ended: %s ran as in production, untraced, and no fault, retry or redelivery of %s was tested; wait for the goroutines the agent starts before it returns",
				calls, strings.Join(ops, ", "), at, they, them),
		})
		res.Inconclusive, res.Safe = true, false
	}
	s.lates = nil
	if s.watch != nil {
		s.watch.stop()
	}
}
