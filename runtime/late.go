package runtime

import (
	"fmt"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
// A call that carries the ended run's context is told by it. One without
// it (a tool without a context parameter, or given context.Background())
// is told by the goroutine that made it (attribute): a goroutine an ended
// invocation started. Made while a later run of the same suite is active,
// such a call may serve that run (a worker the agent started once and
// reuses), and nothing tells: it is refused in those runs, as an error
// naming the scenario that left the goroutine (leftCall). Runs of other
// suites are other agents', but a goroutine one agent started may serve
// another (a worker pool two tests share): those runs are not blamed, but
// say they could not tell, and are inconclusive. With no run of its own
// suite active, the call is counted late like any other.
//
// The suite takes the counts when its report is assembled (Suite.Report).
// A late call after that has no report left to go to, and is not
// reported: blaming whichever run is active then (another test's) would
// make that run's verdict depend on timing it has no part in.

// lateCalls counts the calls a scenario's goroutines made after its run
// ended. It is small and kept apart from the recorder, so that the
// goroutines ended remembers (endedRoots) hold no trace alive.
type lateCalls struct {
	scenario string     // its name, for the refusals of calls made during other runs
	suite    *lateWatch // its suite's watch: the runs a goroutine it left may serve

	mu sync.Mutex
	n  int
	// carried counts those of the n calls a server in the process made
	// with the run carried (Resolve): a consumer that took a message of
	// the run's after it ended. writes names the ops of the n that are
	// writes.
	carried int
	writes  []string
	ops     []string  // the op names, as first seen
	sites   []uintptr // the call sites, as first seen (at most maxLateSites)
	closed  bool      // the suite's report has been assembled
}

const maxLateSites = 8

// note counts a late call of op from site, until the suite's report is
// assembled.
func (l *lateCalls) note(op *Op, site uintptr, carried bool) {
	if l == nil {
		return // a run outside any suite (RunTraced): no report to tell
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.n++
	if carried {
		l.carried++
	}
	if !slices.Contains(l.ops, op.Name) {
		l.ops = append(l.ops, op.Name)
	}
	if op.Kind == KindWrite && !slices.Contains(l.writes, op.Name) {
		l.writes = append(l.writes, op.Name)
	}
	if site != 0 && len(l.sites) < maxLateSites && !slices.Contains(l.sites, site) {
		l.sites = append(l.sites, site)
	}
}

// watch returns the watch of the suite l's run belongs to, nil for none.
func (l *lateCalls) watch() *lateWatch {
	if l == nil {
		return nil
	}
	return l.suite
}

// lateWatch keeps the wrappers on their traced path from a suite's first
// scenario to its report, so that a late call made between two scenarios,
// while no run is active, is counted too. It lists the suite's runs since
// then, whose late calls lateRuns finds until the report. A suite dropped
// without a report lets go when it is collected: the watch ends, and its
// runs leave lateRuns.
type lateWatch struct {
	name string // the suite's
	on   atomic.Bool
	mu   sync.Mutex
	runs []uint64
	// tokens are those of the suite's ended runs (Token), kept until the
	// report: a consumer that serves a message after its run ended
	// (Resolve) makes that run's late call, told as any, not a call of
	// no run, untraced and told nowhere (recorder.dropTokens).
	tokens []string
}

// watching counts the suites whose watch is on: while one is, a call whose
// context carries no run is looked up among the goroutines ended runs left
// behind even when no run is active (lookup).
var watching atomic.Int32

// watchLate starts the suite's watch, once, and lists run id, whose late
// calls are l.
func (s *Suite) watchLate(id uint64, l *lateCalls) {
	if s.watch == nil {
		s.watch = &lateWatch{name: s.name}
		goruntime.AddCleanup(s, (*lateWatch).stop, s.watch)
	}
	w := s.watch
	l.suite = w
	w.mu.Lock()
	w.runs = append(w.runs, id)
	w.mu.Unlock()
	lateRuns.add(id, l)
	if w.on.CompareAndSwap(false, true) {
		watching.Add(1)
		activeRuns.Add(1)
		gcPaceUp()
	}
}

// stop ends the watch: the runs it lists leave lateRuns, and the
// wrappers may take their inactive path again.
func (w *lateWatch) stop() {
	w.mu.Lock()
	runs, toks := w.runs, w.tokens
	w.runs, w.tokens = nil, nil
	w.mu.Unlock()
	lateRuns.remove(runs)
	forgetTokens(toks)
	if w.on.CompareAndSwap(true, false) {
		gcPaceDown()
		activeRuns.Add(-1)
		if watching.Add(-1) == 0 {
			callers.mu.Lock()
			callers.m = nil
			callers.mu.Unlock()
		}
	}
}

// callers caches, per goroutine, what lateCaller found: the late calls of
// the ended invocation it descends from, or nil. A goroutine's ancestry
// never changes, and its ancestors that were invocations were known as
// such before it was created; so the stack snapshot that tells it is
// taken once per goroutine, not once per call (a Setup that seeds the
// world through traced tools calls between every two scenarios). The
// cache is dropped when no suite watches any more, and when it grows
// past lateCallersMax.
var callers struct {
	mu sync.Mutex
	m  map[uint64]*lateCalls
}

const lateCallersMax = 4096

// lateCaller returns the late calls of the ended invocation the calling
// goroutine descends from, or nil; for a call made while no run is active.
func lateCaller() *lateCalls {
	gid := goroutineID()
	callers.mu.Lock()
	l, ok := callers.m[gid]
	callers.mu.Unlock()
	if ok {
		return l
	}
	inv, l, _, _ := attribute(nil, gid)
	if inv != nil && inv.rec.stopped.Load() {
		l = inv.rec.late // an invocation its run abandoned, or its goroutine
	}
	callers.mu.Lock()
	if callers.m == nil || len(callers.m) >= lateCallersMax {
		callers.m = map[uint64]*lateCalls{}
	}
	callers.m[gid] = l
	callers.mu.Unlock()
	return l
}

// newLate returns a zero count for a scenario's run, taken from a block
// of them: one allocation per 32 scenarios instead of one each.
func (s *Suite) newLate(scenario string) *lateCalls {
	if len(s.lateBlock) == 0 {
		s.lateBlock = make([]lateCalls, 32)
	}
	l := &s.lateBlock[0]
	s.lateBlock = s.lateBlock[1:]
	l.scenario = scenario
	return l
}

// lateRuns finds the late calls of a suite's run by the run's id, from its
// first scenario to its report: a call without a context is told by the
// goroutine of the ended invocation it descends from (endedRoots), which
// keeps the run's id only.
var lateRuns = lateRegistry{m: map[uint64]*lateCalls{}}

type lateRegistry struct {
	mu sync.Mutex
	m  map[uint64]*lateCalls
}

func (g *lateRegistry) add(run uint64, l *lateCalls) {
	g.mu.Lock()
	g.m[run] = l
	g.mu.Unlock()
}

// get returns the run's late calls; once its suite's report was taken,
// reported, which counts nothing (the call is still nobody else's).
func (g *lateRegistry) get(run uint64) *lateCalls {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l, ok := g.m[run]; ok {
		return l
	}
	return reported
}

// reported stands for the late calls of a run whose suite's report was
// taken: closed from the start.
var reported = &lateCalls{closed: true}

func (g *lateRegistry) remove(runs []uint64) {
	g.mu.Lock()
	for _, run := range runs {
		delete(g.m, run)
	}
	g.mu.Unlock()
}

// reportLate closes the late-call counts of the scenarios the report
// holds (a result a run dropped, such as a schedule explored twice, is
// neither kept nor told) and turns each that is not zero into a
// goroutine_leak warning on its scenario, which it makes inconclusive.
func (s *Suite) reportLate() {
	s.awaitLeft()
	for _, res := range append([]*Result{s.baseline}, s.results...) {
		if res == nil || res.late == nil {
			continue
		}
		l := res.late
		l.mu.Lock()
		done := l.closed // told by an earlier Report
		l.closed = true
		n, ops, sites, carried, writes := l.n, slices.Clone(l.ops), l.sites, l.carried, slices.Clone(l.writes)
		l.mu.Unlock()
		if done || n == 0 {
			continue
		}
		// Sorted: the order goroutines happened to call in must not
		// split one problem in two (GroupKey joins the ops).
		slices.Sort(ops)
		where := make([]string, len(sites))
		for i, pc := range sites {
			where[i] = shortSite(siteOf(pc))
		}
		slices.Sort(where)
		calls, they, them := strconv.Itoa(n)+" tool calls", "they", "them"
		if n == 1 {
			calls, they, them = "a tool call", "it", "it"
		}
		at := ""
		if len(where) > 0 {
			at = ", at " + strings.Join(where, ", ")
		}
		msg := fmt.Sprintf("%s (%s%s) came after the scenario's run had ended, from a goroutine the agent left running (one it started and did not wait for, or a context.AfterFunc callback still running %v after the invocation returned) or from a worker it handed the work to with its context (a queue that a goroutine of Setup or of the test drains): %s ran as in production, untraced, and no fault, retry or redelivery of %s was tested; wait for the goroutines the agent starts before it returns and keep cleanup callbacks short; for a worker, trace the call by which the agent queues the work, with a Settle that waits for the worker to drain (testkit.SettleUntil), not the worker's own call",
			calls, strings.Join(ops, ", "), at, afterFuncGrace, they, them)
		if carried == n {
			msg = fmt.Sprintf("%s (%s%s) came after the scenario's run had ended, made by a server in the process with the run carried (runtime.Resolve): a consumer that took a message a delivery had sent after the run's end was read, though each delivery was held until the state had held still for twice the time the baseline's consumer took to call; %s ran as in production, untraced, and no fault, retry or redelivery of %s was tested; give a Settle that waits for the bus to drain (testkit.SettleUntil, with the count of messages not yet handled): each delivery that carried the run is then held open until the world is quiet",
				calls, strings.Join(ops, ", "), at, they, them)
		}
		if len(writes) > 0 {
			// A write the run's end was read before may be the one a
			// missing_write says was never made.
			var withdrawn []string
			res.Findings = slices.DeleteFunc(res.Findings, func(f Finding) bool {
				if f.Code != CodeMissingWrite || !slices.ContainsFunc(f.Ops, func(op string) bool { return slices.Contains(writes, op) }) {
					return false
				}
				m, _, _ := strings.Cut(f.Message, "; ")
				withdrawn = append(withdrawn, "["+f.Code+"] "+m)
				return true
			})
			if len(withdrawn) > 0 {
				msg += "; withdrawn, as a late call may have made the write: " + strings.Join(withdrawn, "; ")
			}
		}
		res.Findings = append(res.Findings, Finding{
			Code: CodeGoroutineLeak, Severity: SeverityWarning, Scenario: res.Scenario, Replay: res.Replay,
			Ops: ops, Message: msg,
		})
		res.Inconclusive, res.Safe = true, false
	}
	if s.watch != nil {
		s.watch.stop()
	}
}

// A goroutine the agent starts and does not wait for may call a tool long
// after its invocation returned (a reminder sent after a sleep). The gated
// baseline waits for it and traces the call; the other scenarios ended
// when their deliveries returned, and the call then came after the whole
// suite's report, where it was told nowhere: the scenario planned on it
// said the agent "never made" it, the two reminders of a duplicate
// delivery were never seen, and the verdict was safe (or, with a sleep of
// a millisecond, unsafe on one run and safe on the next). So when the
// baseline made a call after its invocation had returned
// (Suite.leavesCallers), each later scenario waits as the baseline did,
// up to leftGrace, until the goroutines its invocations left have ended
// or wait for another goroutine (untilLeftQuiet): their calls are the
// scenario's, traced and judged. Those still there as the run ends
// (leftRunning) are waited for by the report, up to leftGrace for all:
// the calls they make meanwhile are counted late, as any. One still there
// then makes its scenario inconclusive, with where it waits. A call made
// without a goroutine to wait for (a time.AfterFunc timer still pending)
// after the report is still not told.

// leftGrace bounds how long a report waits for the goroutines scenarios
// left running.
const leftGrace = time.Second

// leftRunning returns the goroutines r's invocations started that are
// still there as its run ends, but for the process's infrastructure
// (GoInfrastructure: a backend's listener its first call started).
func leftRunning(r *recorder) map[uint64]bool {
	parents := map[uint64]bool{}
	r.mu.Lock()
	for _, inv := range r.all {
		if inv.gid != 0 {
			parents[inv.gid] = true
		}
	}
	r.mu.Unlock()
	if len(parents) == 0 {
		return nil
	}
	var left map[uint64]bool
	for _, g := range snapshotSome(func(_, parent uint64) bool { return parents[parent] }) {
		if parents[g.parent] && !isInfrastructure(g.id) {
			if left == nil {
				left = map[uint64]bool{}
			}
			left[g.id] = true
		}
	}
	return left
}

// untilLeftQuiet waits, up to grace, until each goroutine r's invocations
// left running has ended or waits for another goroutine (not asleep, not
// running, not waiting for a timer or an HTTP answer: gInfo.busy). One
// that reads a reply in the agent's own code (ioAwaited) is waited for
// for readGrace at most from the start, as world.quiet bounds it: under a
// stall bound shorter than grace, one that reads for good (a websocket's
// loop) must not make the scenario stall.
func untilLeftQuiet(r *recorder, grace time.Duration) {
	left := leftRunning(r)
	start := time.Now()
	deadline := start.Add(grace)
	reads := start.Add(readGraceUnder(r.stallAfter))
	for pause := 50 * time.Microsecond; len(left) > 0; pause = min(2*pause, 2*time.Millisecond) {
		busy := false
		for _, g := range snapshotSome(func(id, _ uint64) bool { return left[id] }) {
			if b, why := g.busy(time.Time{}); left[g.id] && b && (why != ioAwaited || time.Now().Before(reads)) {
				busy = true
				break
			}
		}
		if !busy || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause)
	}
}

// awaitLeft waits, up to leftGrace, until the goroutines the scenarios left
// running (Result.left) have ended, and makes each scenario with one still
// there inconclusive, with a goroutine_leak warning saying where it waits.
func (s *Suite) awaitLeft() {
	all := map[uint64]bool{}
	var results []*Result
	for _, res := range append([]*Result{s.baseline}, s.results...) {
		if res != nil && len(res.left) > 0 {
			for id := range res.left {
				all[id] = true
			}
			results = append(results, res)
		}
	}
	if len(all) == 0 {
		return
	}
	deadline := time.Now().Add(leftGrace)
	alive := map[uint64]gInfo{}
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 5*time.Millisecond) {
		clear(alive)
		for _, g := range snapshotSome(func(id, _ uint64) bool { return all[id] }) {
			if all[g.id] {
				alive[g.id] = g
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(pause)
	}
	for _, res := range results {
		var where []string
		for id := range res.left {
			if g, ok := alive[id]; ok {
				where = append(where, fmt.Sprintf("goroutine %d %s at %s", g.id, describeState(g.state), g.where()))
			}
		}
		res.left = nil
		if len(where) == 0 {
			continue
		}
		slices.Sort(where)
		if len(where) > maxBlocked {
			where = append(where[:maxBlocked:maxBlocked], fmt.Sprintf("and %d more", len(where)-maxBlocked))
		}
		res.Findings = append(res.Findings, Finding{
			Code: CodeGoroutineLeak, Severity: SeverityWarning, Scenario: res.Scenario, Replay: res.Replay,
			Message: fmt.Sprintf("the baseline's goroutines that the agent did not wait for made tool calls after it returned, and goroutines this scenario's invocations left were still there when the report was assembled, %v later at most (%s): what they call from now on is not traced, faulted or judged, so the scenario is incomplete; wait for the goroutines you start before returning", leftGrace, strings.Join(where, "; ")),
		})
		res.Inconclusive, res.Safe = true, false
	}
}

// stillRunning makes a scenario inconclusive whose run ended with calls
// that had begun and not finished: a goroutine the agent left running (a
// webhook's work, answered 202 first) was inside a tool when the run
// ended, between two waits of the harness (untilCallsEnd saw no call
// running, then the goroutine began its next). What such a call did came
// after the world's end state was read and its outcome was never seen, so
// a second comment posted by a redelivery's goroutine was judged by
// nothing, and the scenario passed (red team: one run of 16). A stalled
// run says so already, and names what is blocked.
func (s *Suite) stillRunning(res *Result, tr *Trace, add func(Finding)) {
	for _, f := range res.Findings {
		if f.Code == CodeStalled {
			return
		}
	}
	var ops, where []string
	n := 0
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.Status != StatusRunning {
			continue
		}
		n++
		if !slices.Contains(ops, o.Name) {
			ops = append(ops, o.Name)
		}
		if w := shortSite(o.Site); o.Site != "" && !slices.Contains(where, w) {
			where = append(where, w)
		}
	}
	if n == 0 {
		return
	}
	slices.Sort(ops)
	slices.Sort(where)
	at := ""
	if len(where) > 0 {
		at = ", at " + strings.Join(where, ", ")
	}
	res.Inconclusive = true
	add(Finding{Code: CodeGoroutineLeak, Severity: SeverityWarning, Ops: ops,
		Message: fmt.Sprintf("%s (%s%s) had begun and not finished when the scenario's run ended, in a goroutine the agent left running (one it started and did not wait for): what it did came after the run's end state was read, and it was not judged; wait for the goroutines the agent starts before it returns",
			plural(n, "a tool call", strconv.Itoa(n)+" tool calls"), strings.Join(ops, ", "), at)})
}

// amidLate withdraws, from the result of a run during which a goroutine an
// earlier run of the suite left running made a call (lateAmid), what the
// world judged and that call may have done: a duplicate_write or
// not_idempotent finding resting on the State snapshots (a repeat seen to
// change the world, an end state unlike the baseline's), and an invariant
// that failed. Each is named in a goroutine_leak warning instead, and the
// scenario is inconclusive: the world held a change that may not be this
// run's, so neither its verdict nor a pass can be trusted. Findings from
// the trace alone (a count of executions, a panic) stand.
func amidLate(res *Result, tr *Trace) {
	if len(tr.odd().amidLate) == 0 {
		return
	}
	res.Inconclusive = true
	var withdrawn []string
	var calls []string
	kept := res.Findings[:0]
	for _, f := range res.Findings {
		if !worldJudged(f, tr) {
			kept = append(kept, f)
			continue
		}
		msg, _, _ := strings.Cut(f.Message, "; ")
		withdrawn = append(withdrawn, "["+f.Code+"] "+msg)
		calls = append(calls, f.Calls...)
	}
	res.Findings = kept
	if len(calls) > 0 {
		res.Duplicates = slices.DeleteFunc(res.Duplicates, func(d Duplicate) bool {
			return slices.ContainsFunc(d.Calls, func(id string) bool { return slices.Contains(calls, id) })
		})
		for i := range tr.Ops {
			if o := &tr.Ops[i]; o.Repeat == RepeatDuplicate && slices.Contains(calls, o.ID) {
				o.Repeat = "" // judged on a world this run did not have to itself
			}
		}
	}
	seen := map[string]bool{}
	var lines, ops []string
	for i, msg := range tr.odd().amidLate {
		if !seen[msg] {
			seen[msg] = true
			lines = append(lines, msg)
			if x := tr.odd(); i < len(x.amidLateOps) && !slices.Contains(ops, x.amidLateOps[i]) {
				ops = append(ops, x.amidLateOps[i])
			}
		}
	}
	msg := strings.Join(lines, "; ") + "; so what this run's State judge and invariants saw is not this run's alone, and the scenario is inconclusive"
	if len(withdrawn) > 0 {
		msg += "; withdrawn, as that call may have caused them: " + strings.Join(withdrawn, "; ")
	}
	msg += "; wait for the goroutines the agent starts before it returns"
	res.Findings = append(res.Findings, Finding{Code: CodeGoroutineLeak, Severity: SeverityWarning, Scenario: res.Scenario, Replay: res.Replay, Ops: ops, Message: msg})
}

// worldJudged reports whether finding f rests on the world (State's
// snapshots, an invariant) rather than on the trace alone.
func worldJudged(f Finding, tr *Trace) bool {
	switch f.Code {
	case CodeInvariantFailed, CodeNotIdempotent:
		return true
	case CodeDuplicateWrite:
		for _, id := range f.Calls {
			for i := range tr.Ops {
				if o := &tr.Ops[i]; o.ID == id {
					switch o.JudgedBy {
					case JudgedByState, JudgedByEndState, JudgedByOneExecution:
						return true
					}
				}
			}
		}
	}
	return false
}

// leftWriterFinding tells, after the baseline's run ended, of the
// goroutines its invocations started that are still running the user's
// code (a batching writer the agent starts per delivery on a ticker and
// never stops), where the state changed outside every traced write: the
// goroutine_leak warning above is only for goroutines that made tool
// calls, and an untraced writer left running was told nowhere, its suite
// reading "nothing to note" (red team rtR #11). pre are the goroutines
// there before the agent ran. A goroutine of the standard library or of
// a dependency alone (an HTTP client's keep-alive connection, a database
// pool's opener) runs none of the user's code, and is no such writer.
// The warning changes no verdict: the end state was read as always, once
// the Settle returned or the state held still, and it says so.
func leftWriterFinding(w *world, pre map[uint64]bool) (Finding, bool) {
	if w == nil {
		return Finding{}, false
	}
	all := snapshotGoroutines()
	w.ours(all, 0) // the links to the invocations' goroutines
	var where []string
	n := 0
	for i := range all {
		g := &all[i]
		if pre[g.id] || w.isRoot(g.id) || !g.runsUserCode() || w.invocationOf(g.id) == 0 {
			continue
		}
		n++
		at := g.where()
		if k := len(g.funcs) - 1; k >= 0 && strings.HasPrefix(g.funcs[k], "created by ") && g.files[k] != "" {
			at += ", started at " + shortSite(g.files[k])
		}
		if !slices.Contains(where, at) && len(where) < maxLateSites {
			where = append(where, at)
		}
	}
	if n == 0 {
		return Finding{}, false
	}
	slices.Sort(where)
	return Finding{Code: CodeGoroutineLeak, Severity: SeverityWarning,
		Message: fmt.Sprintf("%s that the agent started (%s) %s still running when the baseline's run ended, and the state changed outside every traced write: a goroutine the agent leaves running may make such changes after the invocation returned, and keeps acting after it (a batching writer on a ticker flushes whatever reaches it later); the end state was read once the Settle returned or the state held still, and a change that comes later is not in it; stop the goroutines the agent starts before it returns (a deferred Close)",
			plural(n, "a goroutine", strconv.Itoa(n)+" goroutines"), strings.Join(where, "; "), plural(n, "was", "were"))}, true
}
