package runtime

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentidem/agentidem-go/internal/bubble"
	"maps"
	"reflect"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Scenario kinds.
const (
	ScenarioBaseline            = "baseline"
	ScenarioLostAck             = "lost_acknowledgement"
	ScenarioBeforeFailure       = "before_operation_failure"
	ScenarioCrashRestart        = "crash_restart"
	ScenarioDuplicateSeq        = "duplicate_delivery/sequential"
	ScenarioDuplicateConcurrent = "duplicate_delivery/concurrent"
)

// Scenario is one planned run of the agent under a fault.
type Scenario struct {
	// Name is the full name, e.g. "lost_acknowledgement/refund#1"; split
	// at "/" it gives the subtest path.
	Name string
	// Kind is the scenario family (one of the Scenario* constants).
	Kind string
	// Fault is the fault to inject, if any.
	Fault Fault
	// OperationIndex is the targeted call's index in the baseline trace,
	// or -1.
	OperationIndex int
	// Deliveries is how many times the invocation is delivered up front
	// (2 for duplicate delivery).
	Deliveries int
	// Concurrent delivers them at once, in lockstep: each delivery's k-th
	// tool call starts only when the other delivery reached its k-th call
	// or returned, the interleaving under which check-then-act races
	// show. An agent with parallel calls runs it under the listed
	// schedule instead (listed): the lockstep numbered a delivery's calls
	// as they arrived and let the ready ones go at once, so the calls of
	// one turn (create and attach) raced the other delivery's in an order
	// the Go scheduler chose, and a real duplicate was reported in 25 of
	// 30 runs. Under the scheduler both deliveries' calls of a round start
	// in canonical order before any finishes, on every run, and the same
	// call of both deliveries starts at once (scheduler.twins), so that a
	// race inside one tool's body can show, as under the lockstep. In
	// both, of two such writes the earlier delivery's reaches the State
	// judge first (judgeAfter), so the same one is the repeat every run.
	Concurrent bool

	sched  *scheduler // interleaving scenarios: the scheduler that gates
	listed bool       // run under the listed schedule (partial batch failure)
	eager  bool       // an interleaving under an eager schedule (Schedule.Eager)
	// request is, for a lost_response, which of the call's write
	// requests through Transport loses its answer, from 1 in the order
	// sent (recorder.lostRequest).
	request int
}

// Path returns the subtest path of the scenario.
func (s Scenario) Path() []string { return strings.Split(s.Name, "/") }

// Suite runs the fault suite of one agent: a baseline, then every scenario
// planned from it. Run does the whole thing; testkit drives the steps one by
// one so that each scenario is a subtest.
type Suite struct {
	name    string
	fn      func(context.Context) error
	cfg     config
	started time.Time

	// restless are the places the world changed by itself before the
	// baseline's agent ran, with a Settle given, read as null in every
	// snapshot (settledbeat.go); restlessNote says so in the baseline.
	restless     [][]string
	restlessNote string
	// control is what the control runs saw: values the world changed
	// with no agent running (control.go).
	control controlSeen

	baseline *Result
	base     *Trace
	// lone keeps the windows of writes that ran alone in the scenarios
	// judged so far (untouchedend.go).
	lone    loneWindows
	baseErr error // the baseline's Setup failed, or a *ConfigError stopped the suite
	results []*Result
	runs    int
	// baseNames is what the renaming of worlds named afresh reads of the
	// baseline (rename.go).
	baseNames baselineNames
	// spare is what the last scenario's recorder left of its block of
	// Calls, for the next one (recorder.takeSpare). Scenarios run one at
	// a time.
	spare spareCalls
	// found is the slice Suite.duplicates last had judgeRepeatsIn append
	// its findings to, emptied, for the next scenario's.
	found []Finding

	scheduledResults []*Result
	impure           string // why the agent cannot run in a bubble
	nothingTraced    bool
	seenOnce         map[string]bool // findings reported once per suite
	selectErr        error           // the scenario selection names no scenario (checkSelection)
	stateErr         error           // State's first failure in the baseline (stateerror.go)
	commuting        []heldFinding   // concurrent_writes_same_entity findings held back (commutingWrites)
	shardRan         *Shard          // this shard's part, once explored (shard.go)
	pre              *preflightRun
	inBubble         bool // a scheduled run in a bubble is under way (runGated)
	// readLoops is apart from the suite: the worlds of its scenarios
	// point to it, and something of the process keeps a scenario's world
	// reachable after the suite's last use, so that a pointer into the
	// suite there kept the suite, and its traces, alive
	// (TestSuiteIsCollected).
	readLoops      *readLoops
	callGoroutines int  // goroutines that made calls in the baseline
	offRoot        bool // some call of the baseline came from a goroutine not an invocation's own
	// leavesCallers: a call of the baseline came after its invocation had
	// returned, from a goroutine the agent started and did not wait for
	// (fire and forget). The goroutines each later scenario leaves running
	// are then waited for before the report (Result.left, late.go).
	leavesCallers bool
	// carriedLag is, where the baseline's calls carried with the run
	// (Resolve) came after their delivery returned, the longest time from
	// the return to such a call (recorder.carriedLag); zero for none.
	carriedLag time.Duration
	// serial holds the State windows of the writes of a run with every
	// call alone (serialWindows), if one ran.
	serial         map[string][2]string
	afterReturnOps []string    // the ops of those calls
	secrets        secretSet   // the redacted values of every scenario (redact.go)
	lateBlock      []lateCalls // late counts not handed out yet (newLate)
	watch          *lateWatch
	stallW         *stallWatch     // the watch its scenarios without gates share (stallWatch)
	hookRes        chan hookResult // what its hooks tell callHook, outside a bubble
	errs           [3]error        // the errors of a scenario's deliveries run from the suite's goroutine (deliver)
	hookStall      string          // why a Setup or Teardown was left running (callHook)
	// zeroIDs are the writes whose identity was the zero value in every
	// call of the baseline, their arguments differing (zeroidentity.go).
	zeroIDs map[string]zeroIdentity
}

// NewSuite prepares the suite of agent fn, named name. fn is one invocation
// of the agent: it must use ctx for its tool calls.
func NewSuite(name string, fn func(ctx context.Context) error, opts ...Option) *Suite {
	if fn == nil {
		panic("runtime: NewSuite with a nil agent func")
	}
	s := &Suite{name: name, fn: fn, cfg: newConfig(opts), started: time.Now()}
	noteSuiteStart(s.started) // the window of the moments stored as numbers (epochLike)
	return s
}

// StallTimeout returns how long a scenario of the suite may go without
// progress before it is stalled (the StallTimeout option,
// AGENTIDEM_STALL_TIMEOUT, or DefaultStallTimeout).
func (s *Suite) StallTimeout() time.Duration { return s.cfg.stallTimeout() }

// Run runs the whole fault suite of fn outside go test, for CLIs and
// services, and returns its report: the baseline, the fault scenarios, and,
// for an agent with parallel calls, the interleavings and partial batch
// failures. Schedules run on real time, with quiescence read off the
// goroutines of the process. The error is for problems of the harness
// (a failing Setup), never for findings: those are in the report.
func Run(ctx context.Context, name string, fn func(ctx context.Context) error, opts ...Option) (*Report, error) {
	s := NewSuite(name, fn, opts...)
	if _, err := s.Baseline(ctx); err != nil {
		return s.Report(), err
	}
	var errs []error
	parallel := s.Parallel(ctx)
	for _, sc := range s.Plan() {
		if _, err := s.RunScenario(ctx, sc); err != nil {
			errs = append(errs, err)
		}
	}
	if parallel {
		if _, err := s.Interleavings(ctx, nil); err != nil {
			errs = append(errs, err)
		}
		for _, sc := range s.PartialBatchPlan() {
			if _, err := s.RunScenario(ctx, sc); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return s.Report(), errors.Join(errs...)
}

// Baseline runs the agent once without faults, under the listed schedule:
// parallel calls are held at their gates and released in canonical order,
// so the same agent gets the same baseline on every run. When the agent
// fails in that order and the trace shows calls it declared dependent (or
// two writes to one entity) in flight together, the failure is the order
// finding, not a broken baseline: the reverse order is tried, and when it
// passes it is the baseline the faults are planned from. Plan is empty when
// the baseline failed. When the baseline passed and OnlyScenario (or
// AGENTIDEM_SCENARIO) names none of the scenarios planned from it, Baseline
// returns a *ConfigError that names the closest ones, the report counts the
// name as a scenario that did not run, and Plan, PartialBatchPlan and
// Interleavings run nothing. An AGENTIDEM_* variable that does not parse
// is a *ConfigError before the agent runs at all: the baseline's result
// says it did not run, and nothing else runs either. So is a State that
// panicked or returned a value it cannot encode in the baseline: the
// baseline's result is inconclusive, and nothing else runs.
func (s *Suite) Baseline(ctx context.Context) (*Result, error) {
	sc := Scenario{Name: ScenarioBaseline, Kind: ScenarioBaseline, OperationIndex: -1, Deliveries: 1}
	err := s.cfg.envErr
	if err == nil {
		err = staleDeclarations() // stale.go
	}
	if err != nil {
		// Run with the default in its place, the suite would be another
		// than the one asked for (a stall bound of 10 s where 1 was
		// given without its unit, seed 1's sample for a seed that is no
		// number), and its verdict would pass for that one's.
		why := "not run: " + err.Error()
		res := &Result{
			Scenario: sc.Name, Kind: sc.Kind, OperationIndex: sc.OperationIndex, Replay: s.cfg.replay(sc.Name),
			Inconclusive: true, Error: why, Trace: &Trace{Name: s.name, Ops: []Operation{}, Notes: []string{why}},
			Findings: []Finding{}, Duplicates: []Duplicate{}, Invariants: []InvariantResult{},
		}
		s.baseline, s.base, s.baseErr = res, res.Trace, err
		return res, err
	}
	res, sch, err := s.runGated(ctx, sc, prefixChooser(nil), nil)
	if err == nil && sch.err == nil && baselineFailed(res) && len(sch.shapes) > 0 {
		if order := s.orderFindings(res, sch); len(order) > 0 {
			// Only a reverse order that passes makes the failure the
			// order's. Where it fails too (both tools write to a table
			// Setup never made), the baseline failed, whatever the order:
			// an order finding said "in the reverse order it did not"
			// of a reverse order that failed as well (red team, /tmp/rtP
			// #9). The order finding is made once the baseline passes,
			// from its schedules.
			alt, altSch, altErr := s.runGated(ctx, sc, reverseChooser(), nil)
			if altErr == nil && altSch.err == nil && !baselineFailed(alt) {
				res, sch = alt, altSch
				res.Findings = append(res.Findings, order...)
			}
		}
	}
	tr := res.Trace
	s.baseline, s.base, s.baseErr = res, tr, err
	if outer := s.outerOps(); outer != nil {
		// The rounds were shaped while the baseline ran, before its trace
		// said which ops make calls inside their own: shaped again as
		// every schedule shapes them (runGated), the plan (Space,
		// PlannedSchedules, the shards') counts the orders that run.
		for i, calls := range sch.rounds {
			sch.shapes[i] = shapeWith(calls, outer, sch.met[i])
		}
	}
	s.pre = &preflightRun{res: res, sch: sch, err: err}
	if err != nil {
		res.Safe = false
		return res, err
	}
	if sch.err != nil {
		err = sch.err
	}
	if s.impure != "" && s.cfg.bubble != nil {
		tr.Notes = append(tr.Notes, "virtual time was asked for but the scenarios run on real time: "+s.impure+"; a testing/synctest bubble cannot host that")
	}
	switch {
	case len(tr.Ops) == 0 && len(tr.Panics) == 0 && !resultHas(res, CodeStalled):
		// A baseline abandoned as stalled before its first call (a model
		// API client's retry back-off longer than the stall bound) says
		// nothing of the wrappers: its stall is the finding, and the
		// baseline fails as any stalled one does. nothing_traced blamed
		// the wrappers of a red team's agent whose SDK was waiting out a
		// 429's Retry-After of 12 s (rtS #10).
		why := "the agent does not call the generated wrappers (call refundTraced, not refund; run go generate), or, through a framework, its tools do not pass the adapter's middleware or are not in its Tools, or the context it passes them does not come from the agent's ctx"
		if res.Error != "" && !strings.HasSuffix(res.Error, "stalled") {
			why += "; the agent returned an error before any call: " + res.Error
		}
		if len(tr.Refused) > 0 {
			why = strings.Join(tr.Refused, "; ")
		}
		res.Findings = append(res.Findings, Finding{
			Code: CodeNothingTraced, Severity: SeverityError, Scenario: sc.Name, Replay: res.Replay,
			Message: fmt.Sprintf("the baseline traced no tool call, so nothing was tested: %s", why),
		})
		if res.Error == "" {
			res.Error = "nothing traced"
		}
		s.nothingTraced = true
	case baselineFailed(res) && !hasOrderFinding(res) && !resultHas(res, CodeStalled):
		// A stalled baseline is one the harness abandoned: its stalled
		// finding says what waited and what to do. baseline_failed beside
		// it said "the agent failed without any fault" of an agent whose
		// only error was the cancellation the abandonment sent it (red
		// team rtU #4).
		msg := res.Error
		if msg == "" && len(tr.Panics) > 0 {
			msg = "panic: " + tr.Panics[0].Value
		}
		what := "the agent failed without any fault"
		if len(sch.shapes) > 0 && strings.Contains(msg, context.DeadlineExceeded.Error()) {
			// Of the harness's making, as likely as the agent's: the
			// listed schedule runs the tools of a round of parallel
			// calls one after another (each call's body ends before the
			// next one starts), so a deadline the agent sets for the
			// turn meets the sum of their times, not the longest.
			msg += "; the suite runs the tools of parallel calls one after another, so a deadline the agent sets around them expires after their sum: raise it under test (testkit's Setup, or an option of the agent)"
		}
		if !res.Failed {
			// The agent recovered from its tool's panic (a framework
			// turns it into an error) and returned: still a failed
			// baseline, said as what happened.
			what = "a tool panicked without any fault, though the agent went on and returned"
		}
		res.Findings = append(res.Findings, Finding{
			Code: CodeBaselineFailed, Severity: SeverityError, Scenario: sc.Name,
			Message: fmt.Sprintf("%s (%s): no fault scenario ran; fix the baseline first", what, msg),
			Replay:  res.Replay,
		})
	}
	res.Safe = !res.Inconclusive
	for _, f := range res.Findings {
		if f.Severity == SeverityError {
			res.Safe = false
		}
	}
	if err == nil && s.stateErr != nil {
		// State failed in the baseline (stateerror.go): no write can be
		// judged by the world, and a suite that ran on would leave every
		// repeat unjudged and pass, a duplicate included. It stops here,
		// as for a bad setting, and the test fails on the error.
		cerr := stateConfigError(s.cfg.state, s.stateErr)
		why := "not judged: " + cerr.Error()
		res.Inconclusive, res.Safe = true, false
		if res.Error == "" {
			res.Error = why
		}
		tr.Notes = append(tr.Notes, why)
		s.baseErr = cerr
		return res, cerr
	}
	if err == nil && s.BaselineOK() {
		if serr := s.checkSelection(ctx); serr != nil {
			// Nothing the selection asked for can run: the suite stops
			// here, and the report counts the selection as a scenario
			// that did not run, so that it does not read SAFE.
			s.selectErr = serr
			sc := Scenario{Name: s.cfg.only, Kind: cmp.Or(strings.Split(s.cfg.only, "/")[0], s.cfg.only), OperationIndex: -1}
			s.NotRun(sc, serr.Error())
			return res, serr
		}
		s.serialWindows(ctx)
	}
	return res, err
}

// serialWindows runs the agent once more, when State is given and writes
// of the baseline overlapped, with every call of a round alone (serial
// order), and keeps the State windows of its writes (s.serial): evidence,
// for the repeats of an overlapped write, that the write's effect is
// visible at all (firstVisible, effectSeen). Without it, two parallel
// calls of a tool whose only effect is a keyed inner write (a repeat
// replayed, changing nothing) counted as a duplicate: no window of the
// baseline held either alone, so State could not show that their effect
// was not one that lands later. The run is no scenario of the report.
func (s *Suite) serialWindows(ctx context.Context) {
	if s.cfg.state == nil || s.pre == nil || s.pre.sch == nil || len(s.pre.sch.shapes) == 0 || s.pre.sch.hazard != "" {
		return
	}
	overlapped := false
	for i := range s.base.Ops {
		o := &s.base.Ops[i]
		overlapped = overlapped || o.Kind == KindWrite && o.Overlapped && o.Status == StatusSuccess
	}
	if !overlapped {
		return
	}
	res, sch, err := s.runGated(ctx, interleavingScenario("serial"), serialChooser(), s.bubble())
	if err != nil || sch.err != nil || baselineFailed(res) || res.Trace == nil {
		return
	}
	s.serial = windows(res.Trace)
}

func baselineFailed(res *Result) bool {
	return res.Failed || len(res.Trace.Panics) > 0
}

// resultHas reports whether res has a finding of code.
func resultHas(res *Result, code string) bool {
	return slices.ContainsFunc(res.Findings, func(f Finding) bool { return f.Code == code })
}

func hasOrderFinding(res *Result) bool {
	for _, f := range res.Findings {
		if f.Code == CodeDependentCallsConcurrent || f.Code == CodeConcurrentWritesEntity {
			return true
		}
	}
	return false
}

// orderFindings are the ordering findings of a failed baseline, each with
// the schedule it failed under and what the dependent call did there.
//
// Each is the baseline's finding, and its replay line selects the
// baseline: the baseline runs under the listed schedule on every run, so
// it fails in that order again and its subtest reports the finding. The
// line used to select the listed schedule's interleaving subtest, which
// passed then: that schedule did not report the finding again (it does
// now, record, and the report groups the two), and where the reverse order
// failed too, no interleaving runs at all. The schedule's own form stays
// beside it: AGENTIDEM_SCHEDULE in front of a go test command that runs
// the baseline shows the finding as well.
func (s *Suite) orderFindings(res *Result, sch *scheduler) []Finding {
	probe := &Result{}
	s.orderChecks(probe, res.Trace, Scenario{Kind: ScenarioInterleaving})
	name := sch.schedule.String()
	replay := s.cfg.replay(ScenarioBaseline) + scheduleEnv(name)
	var out []Finding
	for _, f := range probe.Findings {
		what := res.Error
		for _, o := range res.Trace.Ops {
			if len(f.Ops) == 2 && o.Name == f.Ops[1] && o.Error != "" {
				what = fmt.Sprintf("%s failed: %s", o.Name, o.Error)
				break
			}
		}
		if what != "" {
			f.Message += fmt.Sprintf(". In the order %s the agent failed (%s), in the reverse order it did not", withLegend(name, sch.legend()), what)
		}
		f.Scenario, f.Replay = ScenarioBaseline, replay
		out = append(out, f)
	}
	return out
}

// BaselineOK reports whether the baseline ran and succeeded.
func (s *Suite) BaselineOK() bool {
	return s.baseline != nil && s.baseErr == nil && !s.baseline.Failed && len(s.base.Panics) == 0 && !s.nothingTraced
}

// Plan lists the scenarios the baseline calls for: for every write call of
// the baseline a lost acknowledgement (it ran, the agent sees a timeout), a
// lost request (it did not run, the agent sees the same timeout), a failure
// before the operation and a crash after it; then duplicate delivery,
// sequential and concurrent. A call that failed by itself in the baseline
// gets no lost acknowledgement and no crash, which follow a success and
// could not fire there; the report's notes say so. With
// OnlyScenario, just that one.
func (s *Suite) Plan() []Scenario {
	if s.selectErr != nil {
		return nil
	}
	plan := s.plan()
	if s.cfg.only != "" {
		for _, sc := range plan {
			if sc.Name == s.cfg.only {
				return []Scenario{sc}
			}
		}
		return nil
	}
	return plan
}

// plan is Plan whatever OnlyScenario selects.
func (s *Suite) plan() []Scenario {
	if !s.BaselineOK() {
		return nil
	}
	// An agent with parallel calls is planned from, and run under, the
	// listed schedule: which call is "the second addLineItem" is then the
	// same on every run, so each scenario replays exactly.
	base, listed := s.base, s.pre != nil && s.pre.err == nil && s.pre.sch.hazard == "" && len(s.pre.sch.shapes) > 0
	writes := 0
	for i := range base.Ops {
		if base.Ops[i].Kind == KindWrite {
			writes++
		}
	}
	plan := make([]Scenario, 0, 4*writes+2)
	for i, op := range base.Ops {
		if op.Kind != KindWrite {
			continue
		}
		if sameAsEarlier(base, i) != nil {
			continue // its first call's scenarios stand for it (samecall.go)
		}
		target := op.Name + "#" + strconv.Itoa(op.Occurrence)
		for _, k := range []FaultKind{FaultLostAck, FaultLostRequest, FaultBefore, FaultCrash} {
			if followsSuccess(k) && failedInBaseline(&op) {
				continue // it could not fire (notPlanned)
			}
			if op.noError && k != FaultCrash {
				continue // no error result to fail or lose it through (notPlanned)
			}
			plan = append(plan, Scenario{
				Name:           string(k) + "/" + target,
				Kind:           string(k),
				Fault:          Fault{Kind: k, Op: op.Name, Occurrence: op.Occurrence},
				OperationIndex: i,
				Deliveries:     1,
				listed:         listed,
			})
		}
		for r := range writeRequests(&op) {
			// Its client's requests are seen (Transport): each write
			// request in turn loses its answer, for a retry inside the
			// call to meet (resent.go). One on the first only left a
			// tool's second request (a receipt after a charge, its
			// helper retrying) never faulted: a receipt sent twice
			// passed 5 runs of 5 (red team rR #6).
			f := Fault{Kind: FaultLostResponse, Op: op.Name, Occurrence: op.Occurrence}
			plan = append(plan, Scenario{
				Name:           string(FaultLostResponse) + "/" + lostTarget(f, r+1),
				Kind:           string(FaultLostResponse),
				Fault:          f,
				OperationIndex: i,
				Deliveries:     1,
				listed:         listed,
				request:        r + 1,
			})
		}
	}
	plan = append(plan,
		Scenario{Name: ScenarioDuplicateSeq, Kind: ScenarioDuplicateSeq, OperationIndex: -1, Deliveries: 2, listed: listed},
		Scenario{Name: ScenarioDuplicateConcurrent, Kind: ScenarioDuplicateConcurrent, OperationIndex: -1, Deliveries: 2, Concurrent: true, listed: listed},
	)
	return plan
}

// followsSuccess reports whether fault k is injected once the call
// succeeded (a lost acknowledgement, a crash after it): it cannot fire on
// a call that fails by itself.
func followsSuccess(k FaultKind) bool { return k == FaultLostAck || k == FaultCrash }

// failedInBaseline reports whether baseline write o failed by itself: its
// tool returned an error (an attach to an invoice the agent had not
// opened yet, answered 404, before the model opened it and attached
// again). A fault that follows a success is not planned on it: it would
// not fire, and every run of a correct agent would be inconclusive for
// the harness's own choice (red team rtS #8, with
// testkit.FailInconclusive failing it on every run). The calls of the op
// that succeeded have their own scenarios.
func failedInBaseline(o *Operation) bool {
	return o.Kind == KindWrite && o.Status == StatusFailed && o.Fault == FaultNone
}

// notPlanned returns the calls of the baseline that the plan gave no
// fault that follows a success (failedInBaseline), each with the note
// that says why; none when the baseline did not pass.
func (s *Suite) notPlanned() (targets, notes []string) {
	if !s.BaselineOK() {
		return nil, nil
	}
	for i := range s.base.Ops {
		o := &s.base.Ops[i]
		if !failedInBaseline(o) {
			continue
		}
		rest := "no call of " + o.Name + " succeeded there, so no scenario loses its acknowledgement or crashes after it"
		for j := range s.base.Ops {
			if p := &s.base.Ops[j]; p.Name == o.Name && p.Kind == KindWrite && p.Status == StatusSuccess {
				rest = "the calls of " + o.Name + " that succeeded there have theirs"
				break
			}
		}
		targets = append(targets, o.Name+"#"+strconv.Itoa(o.Occurrence))
		notes = append(notes, fmt.Sprintf("lost_acknowledgement and crash_restart were not planned on %s#%d: it failed by itself in the baseline (%s), and these faults follow a call's success, so they could not fire; %s",
			o.Name, o.Occurrence, clip(o.Error, 120), rest))
	}
	// A write with no error result: only a crash can fire on it. Its
	// three other scenarios per call were planned and each reported
	// inconclusive with a fault_not_triggered warning, which a suite
	// under FailInconclusive could never pass but by changing the tool's
	// signature (red team rtV #7); one note per op says why they are not.
	noted := map[string]bool{}
	for i := range s.base.Ops {
		o := &s.base.Ops[i]
		if o.Kind != KindWrite || !o.noError || noted[o.Name] {
			continue
		}
		noted[o.Name] = true
		notes = append(notes, fmt.Sprintf("lost_acknowledgement, lost_request and before_operation_failure were not planned on %s: it has no error result, so no failure or lost acknowledgement can be injected into it; crash_restart and the duplicate deliveries still repeat it. Give it an error result for the suite to test how the agent meets its failures", o.Name))
	}
	return targets, notes
}

// RunScenario runs one planned scenario from a fresh world and returns its
// result, which the report also keeps.
func (s *Suite) RunScenario(ctx context.Context, sc Scenario) (*Result, error) {
	if sc.listed {
		return s.runListed(ctx, sc)
	}
	res, _, err := s.run(ctx, sc)
	s.results = append(s.results, res)
	return res, err
}

// NotRun records planned scenario sc as not run, for why (go test ran no
// subtest for it: -failfast, once a test failed, returns from t.Run at
// once): an inconclusive result whose trace's note says why. The report
// then counts the scenario, and a suite whose scenarios did not run reads
// inconclusive, not SAFE with no scenario.
func (s *Suite) NotRun(sc Scenario, why string) *Result {
	res := &Result{
		Scenario: sc.Name, Kind: sc.Kind, OperationIndex: sc.OperationIndex, Inconclusive: true,
		Trace:    &Trace{Name: sc.Name, Notes: []string{"not run: " + why}},
		Findings: []Finding{}, Duplicates: []Duplicate{}, Invariants: []InvariantResult{},
	}
	if sc.Fault.Kind != FaultNone {
		f := sc.Fault
		res.Fault, res.OperationName = &f, f.Op
	}
	s.results = append(s.results, res)
	return res
}

// runListed runs sc under the listed schedule, in the bubble if any, but
// for a fault scenario, which runs on real time. A fault may leave the
// agent's goroutines blocked for good: a crashed delivery's feeder
// sending to the workers the crash ended, a tool waiting for what a lost
// request never did. Real time leaves them running and says so (the
// crashed delivery taken as gone, a stalled scenario naming where it is
// blocked); a bubble cannot end with them, and testing/synctest ended the
// test binary ("deadlock: main bubble goroutine has exited but blocked
// goroutines remain", "all goroutines in bubble are blocked"), for a
// correct agent too (red team rX: an agent's pool of two workers at
// crash_restart, a wait for an approval whose request was lost, 5 runs of
// 5 each). Only the interleavings run in the bubble, as the README says.
func (s *Suite) runListed(ctx context.Context, sc Scenario) (*Result, error) {
	bubble := s.bubble()
	if sc.Fault.Kind != FaultNone {
		bubble = nil
	}
	res, sch, err := s.runGated(ctx, sc, prefixChooser(nil), bubble)
	if bubble != nil && sch.apart {
		// The same call of both deliveries starts at once, so that their
		// bodies overlap (play's twins), but in a bubble a body that
		// sleeps held its twin back (a lock held across the sleep would
		// have stalled the bubble for good): the bodies ran one after the
		// other, and a race between them (a check, a sleep, an insert)
		// could not show. Run on real time, where they overlap whatever
		// the body holds.
		why := sch.apartWhy
		res, sch, err = s.runGated(ctx, sc, prefixChooser(nil), nil)
		if res.Trace != nil {
			res.Trace.Notes = append(res.Trace.Notes, "virtual time: this scenario ran on real time: a tool body slept ("+why+") where the same call of the other delivery was to start beside it, and a bubble cannot run the two at once safely (a lock held across the sleep stalls it for good)")
		}
	}
	if sch.err != nil && err == nil {
		err = sch.err
	}
	s.results = append(s.results, res)
	return res, err
}

// bubble is the bubble scheduled runs use: the configured one, unless the
// baseline showed what a bubble cannot host.
func (s *Suite) bubble() Bubble {
	if s.impure != "" {
		return nil
	}
	return s.cfg.bubble
}

// run executes a scenario: Setup, the deliveries, invariants, Teardown, and
// the analysis of the trace.
func (s *Suite) run(ctx context.Context, sc Scenario) (*Result, *Trace, error) {
	start := time.Now()
	// The clock is read once here for what a scenario reads of it before
	// its calls: whether it runs in a bubble (bubble.In, a time.Now of its
	// own, here and in Setup's callHook) and its recorder's base. With its
	// trace's StartedAt and CompletedAt taken as offsets from that base
	// (recorder.now, one clock where time.Now reads two), that is eight
	// reads of a clock fewer a scenario, about 150 ns on this project's
	// virtual machine (time.Now 39 ns for its two, time.Since 23 ns for
	// one; docs/performance.md, fourteenth sitting).
	inBubble := start == start.Round(0) // bubble.In, on start
	res := &Result{
		Scenario: sc.Name, Kind: sc.Kind, OperationIndex: sc.OperationIndex,
		Replay: s.cfg.replay(sc.Name), Invariants: []InvariantResult{}, Duplicates: []Duplicate{}, Findings: []Finding{},
	}
	if sc.Fault.Kind != FaultNone {
		f := sc.Fault
		res.Fault = &f
		res.OperationName = f.Op
		res.Phase = PhaseAfter
		if f.Kind == FaultBefore || f.Kind == FaultConflict || f.Kind == FaultLostRequest {
			res.Phase = PhaseBefore
		}
	}
	// The world is taken before Setup, so that what Setup starts (a
	// server, a worker) counts as the scenario's when quiescence is read.
	w := newWorld(sc.Concurrent || sc.sched != nil)
	var setupsDone atomic.Int32 // the Setups that returned nil
	if setup := s.cfg.setup(&setupsDone); setup != nil {
		returned := false
		defer func() {
			if !returned {
				// A Setup ended its goroutine (t.FailNow, t.SkipNow), and
				// callHook ends this one: the Teardowns of the Setups
				// before it still run, as they do when one fails.
				_ = s.teardownAfterSetup(ctx, int(setupsDone.Load()))
			}
		}()
		err := s.callHookIn(w, "Setup", setup, ctx, inBubble)
		returned = true
		if err != nil {
			res.Error = "setup: " + errorText(err)
			err = fmt.Errorf("%s: setup: %w", sc.Name, err)
			if left := leftTxNote(); left != "" {
				// An earlier crash left a transaction open that may
				// hold what Setup failed on (crashtx.go).
				res.Error += "; " + left
				err = fmt.Errorf("%w; %s", err, left)
			}
			if terr := s.teardownAfterSetup(ctx, int(setupsDone.Load())); terr != nil {
				res.Error += "; teardown: " + errorText(terr)
				err = errors.Join(err, fmt.Errorf("%s: teardown: %w", sc.Name, terr))
			}
			res.Inconclusive = true
			res.Trace = &Trace{Name: s.name, Ops: []Operation{}}
			res.Duration = time.Since(start)
			return res, res.Trace, err
		}
	}

	var gate Gate
	if sc.Concurrent {
		gate = newLockstep(sc.Deliveries)
	}
	if sc.sched != nil {
		gate = sc.sched
	}
	r := newRecorderAt(s.name, sc.Fault, gate, start)
	r.lostRequest = int32(sc.request)
	r.faultErr = s.cfg.faultErr
	r.late = s.newLate(sc.Name)
	res.late = r.late
	s.watchLate(r.id, r.late)
	r.useSpare(s.spare)
	s.spare = spareCalls{}
	r.world = w
	w.setupCode = s.cfg.setupCode
	res.Clock = ClockReal
	if sc.sched != nil && !sc.sched.realtime {
		res.Clock = ClockVirtual // in a bubble: a stall is the bubble's watchdog's
	} else {
		r.stallAfter = s.cfg.stallTimeout()
		w.stallAfter = r.stallAfter
	}
	if s.readLoops == nil {
		s.readLoops = &readLoops{}
	}
	w.loops = s.readLoops
	if inBubble {
		// The suite runs in a bubble the test made (synctest.Test):
		// every scenario's clock is the bubble's, which each result
		// called real (a red team's).
		res.Clock = ClockVirtual
	}
	if lk, ok := gate.(*lockstep); ok {
		lk.rec = r
	}
	r.judge = newJudge(ctx, &s.cfg)
	if r.judge != nil {
		defer r.judge.halt.stop() // its context's (statebound.go)
		if sc.Kind == ScenarioBaseline {
			s.restless, s.restlessNote = nil, ""
			r.judge.stillFor, r.judge.keepPassed = endCalibrate, true
			r.judge.lookLate = s.cfg.settle == nil
			r.judge.reads = &readCheck{} // a read that changes the state (readwrites.go)
		} else if s.base != nil {
			r.judge.leaveOut = s.restless
			r.judge.stillFor, r.judge.stillMax = stillFor(s.base)
			// The states its end goes through as it is read, where it
			// never holds still: places that change by themselves there
			// are restless too (untraced.own).
			r.judge.keepPassed = true
			// The baseline's state changed outside its calls while a
			// goroutine Setup left ran (worldLive): a repeat's window
			// may hold what the world did (a worker of Setup's,
			// worldAfter), and the end is then what tells whether the
			// repeat left a second effect: it is read once it held
			// still, as where this run saw such a change. Not for an
			// agent's own untraced line alone: that costs a run no wait.
			r.judge.worldMoves = s.base.worldLive && len(s.base.gaps) > 0 && s.cfg.settle == nil
			r.judge.recheckSettle = s.base.worldLive && s.cfg.settle != nil
			if s.carriedLag > 0 && s.cfg.settle == nil {
				// Each delivery that carries the run is held until the
				// state held still for twice the time the baseline's
				// server took to call after its delivery returned
				// (holdCarried), within endStillMax.
				r.judge.carriedHold = min(max(2*s.carriedLag+endPoll, 4*endPoll), endStillMax)
			}
			if r.judge.worldMoves {
				r.judge.atWork = w.worldAtWork
			}
			if len(s.base.gaps) > 0 && s.cfg.settle == nil {
				// The baseline's state changed outside every traced
				// write: an effect that lands after its call (a mail a
				// tool sends once it answered) may not have landed when
				// a run that repeats the call returns, and its end,
				// read at once, said nothing of how many effects stay
				// (judge.lateBase, latenotlanded.go).
				r.judge.lateBase = s.base.end
				if lag := s.base.odd().lateLag; lag > 0 {
					// Its effect landed lag after the last write in the
					// baseline: a repeat's lands as late after it.
					r.judge.lateLag = lag
					r.judge.stillMax += lateWait(lag)
				}
			}
			if lag := s.base.odd().callLag; s.base.worldLive && lag > 0 && s.cfg.settle == nil {
				// A worker of the world's may have carried out what a
				// call set going inside its window in the baseline (a
				// first, slow call: a connection set up), and a repeat,
				// fast, returns before it acts: where a repeat's window
				// changes nothing, the end is read once it held still
				// for twice the time the baseline's change took from
				// its window's start, for the end to hold a second
				// effect (judge.holdRepeats). Before, a Kafka consumer's
				// second refund landed after an end read 1 ms after the
				// repeat, which was absorbed on every run (red team rtU
				// #2).
				r.judge.holdRepeats = true
				still := max(r.judge.stillFor, 2*lag+endPoll)
				r.judge.stillMax += still - r.judge.stillFor
				r.judge.stillFor = still
			}
			if sc.Kind == ScenarioDuplicateSeq || sc.Fault.Kind == FaultCrash {
				r.judge.redeliverStill = redeliverHold(s.base, r.judge.stillFor, s.cfg.settle != nil)
			}
			if s.base.worldLive && len(s.base.gaps) == 0 && s.cfg.settle == nil && seenAsError(sc.Fault.Kind) {
				// Setup left goroutines running (a database/sql pool's),
				// which never changed the baseline's state by themselves:
				// an end that differs from the baseline's is read once it
				// held still, for unexplainedEnd to compare.
				r.judge.baseEnd = s.base.end
			}
		}
	}
	var pre map[uint64]bool // the goroutines there before the agent ran
	if sc.Kind == ScenarioBaseline || sc.Fault.Kind == FaultCrash && s.offRoot {
		// A crash scenario needs them only for calls from goroutines
		// other than the invocations' own (invocation.owns): without
		// such calls in the baseline, the snapshot (of every goroutine's
		// stack) is left out, and owns claims only what it can link.
		// After Setup: a worker it started (or the test did) that makes
		// the agent's calls is no goroutine the agent left running, nor
		// one a crash may end (invocation.owns).
		if sc.Kind == ScenarioBaseline {
			pre = w.stillBefore() // no snapshot of every stack when it will do
		}
		if pre == nil {
			pre = map[uint64]bool{}
			goroutineIDs(pre)
			if sc.Kind == ScenarioBaseline && r.judge != nil && w.before != nil {
				// A goroutine there now that was not before Setup ran
				// (a queue worker, a server) may change the state by
				// itself, after the agent's calls: with no Settle
				// given, the baseline's end is read once it held still
				// (judge.worldLive), for the suite to learn what the
				// world does alone (worldAfter).
				for id := range pre {
					if !w.before[id] {
						r.judge.worldLive = true
						break
					}
				}
				if r.judge.worldLive && s.cfg.settle == nil {
					// Where those goroutines are at work as the end
					// is read, and how long a change took from the
					// moment its window opened (judge.lookWorld,
					// judge.callLag).
					r.judge.lookWorld = w.worldAtWork
					r.judge.lookParked = w.setupParked
				}
			}
		}
	}
	if sc.Kind == ScenarioBaseline && r.judge != nil && s.cfg.settle != nil {
		// Places the world changes by itself, which a Settle's end, read
		// once, never learns: left out of every state from here. Whoever
		// started the goroutines that change them, Setup or the test
		// before the suite (settledbeat.go).
		at := time.Now()
		var names []string
		var why string
		if s.restless, names, why = r.judge.restlessBefore(s.cfg.stallTimeout()); len(names) > 0 {
			r.judge.leaveOut = s.restless
			s.restlessNote = restlessNote(names, time.Since(at))
		}
		if why != "" {
			s.restlessNote = why
		}
	}
	if sc.Kind == ScenarioBaseline {
		r.goroutines = map[uint64]bool{}
	}
	r.pre = pre
	began := r.at(r.now())
	r.start()
	var (
		errs  []error
		stall string
	)
	if sc.sched == nil && !sc.Concurrent {
		// One delivery at a time and no gates to drive: the deliveries
		// run from here, watched by a timer, and cost no goroutine of
		// their own.
		var w *stallWatch
		if r.stallAfter > 0 {
			w = s.watchStalls(r, !inBubble)
		}
		errs = s.deliver(ctx, r, sc, s.errs[:0])
		if sc.Kind == ScenarioBaseline && r.judge != nil && !r.aborted.Load() {
			r.judge.noteAgentDone()
		}
		if s.returnState(r, sc) {
			r.judge.noteReturn()
		}
		if (s.leavesCallers || s.offRoot) && !r.aborted.Load() {
			// As the gated baseline does: what the goroutines the
			// agent left running call before they end or block is
			// this scenario's, on every run. So where calls came from
			// goroutines the invocations started (a notification a
			// tool sends from a goroutine it does not wait for), which
			// may call just after the agent returned.
			untilLeftQuiet(r, leftGrace)
		}
		if s.offRoot && !r.aborted.Load() {
			// And a call such a goroutine began is this run's, and
			// ends in it, as in the gated runs below.
			r.untilCallsEnd(leftGrace)
		}
		if w != nil {
			var gaveUp bool
			if stall, gaveUp = w.stop(); gaveUp {
				errs = nil // as await: the agent's outcome is unknown
			}
			if stall != "" {
				// Its timer became giveUp's, and its channel may be
				// closed: the next scenario's watch is made anew.
				s.stallW = nil
			}
		}
	} else {
		resCh := make(chan []error, 1)
		done := make(chan struct{})
		// The world accounts for the goroutines the harness starts (this
		// one and the invocations') instead of taking snapshots of them
		// (quietgates.go), unless the baseline looks for network I/O on
		// their stacks (a bubble was asked for), or the deliveries run at
		// once, each in a goroutine of its own.
		w.mu.Lock()
		w.counted = sc.sched != nil && !sc.Concurrent && !(sc.Kind == ScenarioBaseline && s.cfg.bubble != nil)
		w.mu.Unlock()
		w.start(func() {
			errs := s.deliver(ctx, r, sc, nil)
			if sc.Kind == ScenarioBaseline && r.judge != nil && !r.aborted.Load() {
				// What the agent left, before the world's wait below:
				// did the world change the state after it returned?
				r.judge.noteAgentDone()
			}
			resCh <- errs
		}, done)
		stalled := false
		if sc.sched != nil {
			stalled = sc.sched.drive(done)
		}
		errs, stall = s.await(r, resCh, stalled)
		if stall == "" && s.returnState(r, sc) {
			r.judge.noteReturn()
		}
		if stall == "" && !r.aborted.Load() {
			// A call that a goroutine the agent left running began may
			// still be in its tool (a reminder sent after a sleep, whose
			// service takes a while): it is this run's, and ends in it,
			// up to leftGrace, not in the next scenario's Setup with
			// its trace read as running (on a loaded machine, the
			// waits above gave up first in 7 of 30 runs). Only the
			// calls running now are waited for: a goroutine that keeps
			// calling does not hold the run.
			r.untilCallsEnd(leftGrace)
		}
	}
	if testHookRunEnd != nil {
		testHookRunEnd(r)
	}
	r.stop()
	defer r.closeAmid() // on every way out; amidLate closes it first
	if s.leavesCallers && sc.Kind != ScenarioBaseline && stall == "" {
		res.left = leftRunning(r)
	}
	s.spare = r.takeSpare()
	tr := r.trace()
	tr.ID, tr.StartedAt, tr.CompletedAt = sc.Name, began, r.at(r.now())
	tr.Notes = append(tr.Notes, w.takeReadNotes()...)
	if sc.Kind == ScenarioBaseline && s.restlessNote != "" {
		tr.Notes = append(tr.Notes, s.restlessNote)
	}
	s.runs += tr.Invocations
	if sc.Kind == ScenarioBaseline && s.cfg.bubble != nil {
		// Only a bubble cares (Suite.bubble); outlived takes a snapshot.
		s.impure = w.networkSeen()
		if s.impure == "" && sc.sched != nil {
			sc.sched.mu.Lock()
			sent := sc.sched.sent
			sc.sched.mu.Unlock()
			if sent > 0 {
				// A session connected before the scenario (an MCP
				// client's, Sending) carries the calls through
				// goroutines outside any bubble, which may not touch
				// the bubble's channels: the Go runtime ends the test
				// binary when one does.
				s.impure = "the agent's calls went to a server of this process through a transport's goroutines (an MCP session's: agentidemmcp.Send), which a session connected before the scenario runs outside the bubble"
			}
		}
		if s.impure == "" {
			s.impure = outlived(w, tr)
		}
	}
	if r.judge != nil && stall != "" {
		tr.withRare().endUnread = true // judgeRepeatsIn: no end to judge a repeat by
	}
	if r.judge != nil && stall == "" {
		r.judge.finish()
		tr.end, tr.returned = r.judge.end, r.judge.returned
		tr.endSettled = r.judge.settle != nil && tr.end != ""
		tr.endStill, tr.landedAfter = r.judge.stillEnd()
		tr.worldLive = r.judge.worldLive
		if r.judge.lateLag > 0 && sc.Kind == ScenarioBaseline {
			tr.withRare().lateLag = r.judge.lateLag
		}
		if r.judge.worldLag > 0 {
			tr.withRare().worldLag = r.judge.worldLag
			tr.withRare().worldAfterReturn = r.judge.worldAfterReturn
		}
		if r.judge.baseLooked {
			tr.withRare().baseLooked, tr.withRare().baseBusy, tr.withRare().baseParked = true, r.judge.baseBusy, r.judge.baseParked
			tr.withRare().callLag = r.judge.callLag
		}
		if !tr.endStill && r.judge.busyAt != "" {
			tr.withRare().endBusy = r.judge.busyAt
		}
		tr.passed = r.judge.passedStates()
		var gapsAt []int
		if tr.gaps, gapsAt = r.judge.gapsSeen(); len(gapsAt) > 0 {
			tr.withRare().gapsAt = gapsAt
		}
		if r.judge.late != "" {
			tr.Notes = append(tr.Notes, lateNote(r.judge.late))
			if sc.Kind != ScenarioBaseline && r.judge.repeatedNow() {
				// Where the baseline's end holds nothing of such a
				// change, the two ends cannot say what the repeats did
				// (latelook.go, judgeRepeatsIn).
				tr.withRare().lateRepeated = true
			}
		}
		if r.judge.endErr != "" && sc.Kind != ScenarioBaseline && r.judge.repeatedNow() {
			// The end could not be read (State failed in this world, or
			// it did not go quiet): every rule that asks how the run
			// ended against the baseline had nothing to read, and a
			// repeat its windows showed changing nothing passed on them
			// alone. Never a plain pass (found by fO1, rtO #1).
			tr.Notes = append(tr.Notes, endUnreadNote(r.judge.endErr))
			tr.unsettled = true
		}
	}
	if r.judge != nil && sc.Kind == ScenarioBaseline && stall == "" && (len(tr.gaps) > 0 || tr.returned != tr.end) {
		if f, ok := leftWriterFinding(w, pre); ok {
			f.Scenario, f.Replay = sc.Name, res.Replay
			res.Findings = append(res.Findings, f)
		}
	}
	if r.judge != nil && sc.Kind == ScenarioBaseline && s.stateErr == nil {
		s.stateErr = r.judge.failed.err() // a *ConfigError once the baseline is done (Baseline)
	}
	if sc.Kind == ScenarioBaseline && stall == "" {
		// A read whose own window changed the state: a warning, and the
		// suite inconclusive (readwrites.go).
		for _, f := range r.judge.readFindings() {
			f.Scenario, f.Replay = sc.Name, res.Replay
			res.Findings = append(res.Findings, f)
			res.Inconclusive = true
		}
	}

	res.Trace = tr
	res.FaultFired = tr.Fired
	if op, where := r.retriedPastDeadline(); op != "" {
		tr.Notes = append(tr.Notes, gateDeadlineNote(op, where, "the agent made the call again, having given up waiting for it (a select on the call's context)"))
		r.mu.Lock()
		r.heldPastDeadline = true
		r.mu.Unlock()
	}
	r.mu.Lock()
	if r.unstopped || r.heldPastDeadline || r.apart {
		// A call the crash should have stopped ran, a call's context
		// ended while a gate held it, or the concurrent deliveries ran
		// one after the other for a wait of the world's (their notes
		// say why).
		res.Inconclusive = true
	}
	r.mu.Unlock()
	if stall != "" {
		res.Inconclusive = true
		r.mu.Lock()
		if r.odd().crashLock != "" {
			// The suite's own stall: the crash it played left a lock
			// held, or a database/sql transaction open, that a real
			// crash releases (crashlock.go, crashtx.go). Not the
			// agent's finding, and not safe: inconclusive, saying why.
			what := "the restart"
			if len(r.odd().crashEnds) == 0 {
				what = "the scenario" // a transaction an earlier scenario's crash left open (crashtx.go)
			}
			tr.Notes = append(tr.Notes, what+" could not be tested: "+r.odd().crashLock)
		} else if ended := r.odd().crashEnded; len(ended) > 0 {
			// The crash ended goroutines the crashed delivery had started.
			// If one was a worker the deliveries share (started once, in
			// an object Setup made), the restart waits for it in vain,
			// where a restarted process would have started a new one;
			// the agent's own wait (a mark the crash left in the world)
			// looks the same from here, and is the agent's bug. The stall
			// stays an error, and says which it may be.
			stall += fmt.Sprintf("; the crash had ended %s, which the crashed delivery started: if it is a worker the deliveries share (started once, on first use, in an object Setup made), the restart waited for it in vain, where a restarted process would start a new one; start such a worker in Setup, or one per delivery",
				strings.Join(ended, "; "))
		}
		crashLock, slow := r.odd().crashLock != "", r.odd().slowStall
		r.mu.Unlock()
		if !crashLock {
			sev := SeverityError
			if slow {
				// Every goroutine slept in a retry back-off: slow, not
				// stuck (retrywait.go).
				sev, res.Inconclusive = SeverityWarning, true
			}
			res.Findings = append(res.Findings, Finding{
				Code: CodeStalled, Severity: sev, Scenario: sc.Name, Replay: res.Replay, Message: stall,
			})
		}
	}
	if r.goroutines != nil && stall == "" {
		// A copy, taken under the recorder's lock: a goroutine the agent
		// left behind may still be making calls.
		r.mu.Lock()
		callers := maps.Clone(r.goroutines)
		for _, g := range r.roots {
			delete(callers, g)
		}
		s.callGoroutines = len(r.goroutines)
		s.offRoot = len(callers) > 0
		s.leavesCallers = r.afterReturn.Load()
		if lag := r.odd().carriedLag; lag > 0 {
			s.carriedLag = lag - 1
		}
		s.afterReturnOps = slices.Clone(r.odd().afterReturnOps)
		r.mu.Unlock()
		notStartedByAgent(callers, pre, r.roots)
		// An HTTP server's connection that served a call and waits for
		// the next request (keep-alive) acts only when asked: no leak.
		if leaked := stillAlive(callers, 20*time.Millisecond, idleServerConn); leaked != "" {
			res.Findings = append(res.Findings, Finding{
				Code: CodeGoroutineLeak, Severity: SeverityWarning, Scenario: sc.Name, Replay: res.Replay,
				Message: fmt.Sprintf("a goroutine that made tool calls was still running after the agent returned: it can act after the invocation ended (and after a retry began); wait for the goroutines you start:\n%s", leaked),
			})
		}
	}
	var msgs []string
	claimed := false
	for i, err := range errs {
		if err != nil {
			msgs = append(msgs, deliveryError(i+1, err))
		} else {
			claimed = true
		}
	}
	// The execution outcome is the last delivery's for a crash (the first
	// was cancelled on purpose), and any delivery's otherwise.
	if r.didCrash() && len(errs) > 1 {
		res.Failed = errs[len(errs)-1] != nil
		claimed = errs[len(errs)-1] == nil
	} else {
		res.Failed = len(msgs) > 0
	}
	if stall != "" {
		// The scenario's, not one more delivery's; and no delivery's
		// success can be claimed for a run that never ended.
		msgs = append(msgs, "stalled")
		res.Failed = true
		claimed = false
	}
	if res.Failed {
		res.Error = strings.Join(msgs, "; ")
	}
	for _, e := range tr.Errors {
		res.Error = strings.TrimPrefix(res.Error+"; "+e, "; ")
	}
	if (sc.Kind == ScenarioDuplicateSeq || sc.Kind == ScenarioDuplicateConcurrent) && stall == "" {
		if notes := s.stoppedEarly(tr, errs); len(notes) > 0 {
			res.Inconclusive = true
			tr.Notes = append(tr.Notes, notes...)
		}
	}
	if sc.Kind == ScenarioCrashRestart && stall == "" && r.didCrash() && len(errs) > 1 {
		if note := s.restartStopped(tr, errs); note != "" { // restartstopped.go
			res.Inconclusive = true
			tr.Notes = append(tr.Notes, note)
		}
		if note := r.restartFailedOnLeftTx(errs[len(errs)-1]); note != "" { // crashtx.go
			res.Inconclusive = true
			tr.Notes = append(tr.Notes, note)
		}
	}

	r.mu.Lock()
	untied := slices.Clone(r.odd().untied)
	r.mu.Unlock()
	if note := untiedNote(untied); note != "" {
		// Write requests no call could be tied to (untied.go): untested,
		// and where the baseline sent them, no scenario tests them.
		tr.Notes = append(tr.Notes, note)
		if sc.Kind == ScenarioBaseline {
			res.Inconclusive = true
		}
	}
	s.analyze(res, tr, sc, claimed)
	if note := s.blindAbsorbed(tr); note != "" {
		tr.Notes = append(tr.Notes, note)
	}
	if sc.Kind == ScenarioInterleaving || sc.Kind == ScenarioPartialBatch {
		s.orderChecks(res, tr, sc)
	}
	if sc.Kind == ScenarioInterleaving {
		if s.cfg.outcome != nil {
			res.Outcome = outcomeOf(s.cfg.outcome)
		}
	}
	s.checkInvariants(res, tr)
	if notes, ops := r.closeAmid(); len(notes) > 0 || len(ops) > 0 { // what landed while the world was read, too
		x := tr.withRare()
		x.amidLate, x.amidLateOps = notes, ops
	}
	amidLate(res, tr)
	var err error
	if teardown := s.cfg.teardown(-1); teardown != nil {
		if terr := s.callHook(nil, "Teardown", teardown, ctx); terr != nil {
			err = fmt.Errorf("%s: teardown: %w", sc.Name, terr)
			// go test failed on it, but the report said nothing and the
			// scenario was safe (a red team's): the scenarios after it
			// may start from what this one left.
			res.Inconclusive = true
			tr.Notes = append(tr.Notes, "Teardown failed after this scenario: "+errorText(terr)+"; the scenarios after it may have started from what it left")
		}
	}
	if err == nil && sc.Kind != ScenarioBaseline {
		s.byItself(ctx, res, tr) // a repeat that rests on a heartbeat slower than the looks (control.go)
	}
	res.Safe = !res.Inconclusive
	for _, f := range res.Findings {
		if f.Severity == SeverityError {
			res.Safe = false
		}
	}
	s.redactResult(res, r)
	res.Duration = time.Since(start)
	return res, tr, err
}

// notStartedByAgent removes from callers, the goroutines other than the
// invocations' own (roots) that made the baseline's calls, those the agent
// did not start: those in pre, there before the agent ran (a pool's
// workers that Setup or the test started, fed the agent's context over a
// channel), and those that descend from one of them (a worker such a pool
// starts per job). Those serve the agent but are not its to wait for:
// still running after it returned, they are no leak of its. A goroutine
// that is, or descends from, one of an invocation (of this run, or of an
// earlier one: a pool the agent started on first use, in an earlier test
// of the same process, and never stopped) is the agent's all the same,
// and stays, as does one whose descent cannot be told (its parent has
// exited). An earlier invocation's goroutines are told while ended
// remembers them.
func notStartedByAgent(callers, pre map[uint64]bool, roots []uint64) {
	if len(callers) == 0 || len(pre) == 0 {
		return
	}
	var parent map[uint64]uint64
	for id := range callers {
		if parent == nil {
			parent = map[uint64]uint64{}
			for _, g := range snapshotSome(func(uint64, uint64) bool { return false }) {
				parent[g.id] = g.parent
			}
		}
		agents, older := false, false
		for p, i := id, 0; p != 0 && i < 64; p, i = parent[p], i+1 {
			if _, left := ended.get(p); left || slices.Contains(roots, p) {
				agents = true // it descends from an invocation
				break
			}
			older = older || pre[p]
		}
		if older && !agents {
			delete(callers, id)
		}
	}
}

// await waits for the deliveries of a scenario to return. On real time it
// watches for a stall: no call, gate or return for the stall timeout. A
// stalled scenario is named (what is blocked, where), its gates opened and
// its invocations cancelled; if the agent still does not return, it is
// left running and the scenario ends without it.
func (s *Suite) await(r *recorder, resCh <-chan []error, stalled bool) (errs []error, stall string) {
	if r.stallAfter <= 0 && !stalled {
		return <-resCh, ""
	}
	if r.sched != nil {
		stall = r.sched.hazard
	}
	tick := time.NewTicker(max(r.stallAfter/50, time.Millisecond))
	defer tick.Stop()
	for !stalled {
		select {
		case errs = <-resCh:
			return errs, ""
		case <-tick.C:
			stalled = r.stalled()
		}
	}
	if stall == "" {
		stall = r.describeStall()
	}
	r.abort()
	grace := time.NewTimer(r.cancelGrace())
	defer grace.Stop()
	select {
	case errs = <-resCh:
		return errs, stall
	case <-grace.C:
		return nil, stall + leftRunningText
	}
}

// Returned tells how the agent of res ended: "returned" when it returned
// by itself (an error or not: see Failed), "cancelled" when the scenario
// stalled and the agent returned once the suite cancelled it, "left
// running" when it stalled and did not return even then. A scenario line
// that said "agent returned an error" of an agent blocked for good, whose
// stall finding said it did not return, was untrue (red team rtV #15).
func (res *Result) Returned() string {
	for i := range res.Findings {
		if f := &res.Findings[i]; f.Code == CodeStalled {
			if strings.Contains(f.Message, "; the agent did not return after its context was cancelled") { // leftRunningText
				return "left running"
			}
			return "cancelled"
		}
	}
	return "returned"
}

// leftRunningText ends a stall's message where the agent did not return
// once cancelled. What its goroutines hold, they hold past the verdict: a
// database connection in a query that waits for good, which the test's
// t.Cleanup(pool.Close) waits for, and the binary hung there after the
// verdict until go test's -timeout, with nothing said why (red team,
// /tmp/rtP #6: pgxpool's Close waited for the connection of a tool that
// ran on context.Background()).
const leftRunningText = "; the agent did not return after its context was cancelled, and its goroutines were left running: a Cleanup or Teardown that closes what they use (a database pool, a client, a server) waits for them too, and the test binary can hang there until go test's -timeout; give every tool the agent's ctx, so that cancelling it ends their waits"

// stallWatch watches a scenario whose deliveries run in the suite's own
// goroutine (Suite.run): a timer reads the progress count every
// stallAfter/50; once the scenario stalled it names what is blocked and
// cancels the invocations, and if the agent has not returned after a grace
// period it closes the recorder's abandoned channel, so that the delivery
// waiting for it returns and the agent is left running, as await does.
//
// A suite's scenarios share one watch, its timer reset for each, while
// none stalled and outside a bubble (a timer belongs to the bubble it was
// made in): the watch, its timer, the method value the timer calls and the
// abandoned channel were four allocations and 0.2 µs a scenario (the
// ten-write suite's 41 scenarios without gates: 160 allocations, 12 KB,
// and 18 to 10 µs in its CPU profile with GOMAXPROCS=1). A callback of the
// scenario before that the stop raced with checks the next scenario early,
// which only takes its progress in (recorder.stalled's first look).
type stallWatch struct {
	r     *recorder
	every time.Duration

	mu        sync.Mutex // serializes the timer's callbacks and stop
	t         *time.Timer
	stall     string
	gaveUp    bool
	done      bool
	abandoned chan struct{} // the recorder's (recorder.abandoned)
}

// watchStalls starts the watch of r's scenario: the suite's, when reuse
// and it has one.
func (s *Suite) watchStalls(r *recorder, reuse bool) *stallWatch {
	every := max(r.stallAfter/50, time.Millisecond)
	if w := s.stallW; w != nil && reuse {
		w.mu.Lock()
		w.r, w.every, w.done = r, every, false
		r.abandoned = w.abandoned
		w.t.Reset(every)
		w.mu.Unlock()
		return w
	}
	w := &stallWatch{r: r, every: every, abandoned: make(chan struct{})}
	r.abandoned = w.abandoned
	w.mu.Lock()
	w.t = time.AfterFunc(w.every, w.check)
	w.mu.Unlock()
	if reuse {
		s.stallW = w
	}
	return w
}

func (w *stallWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done || w.r == nil {
		return
	}
	if !w.r.stalled() {
		w.t.Reset(w.every)
		return
	}
	w.stall = w.r.describeStall()
	w.r.abort()
	w.t = time.AfterFunc(w.r.cancelGrace(), w.giveUp)
}

func (w *stallWatch) giveUp() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.stall += leftRunningText
	w.gaveUp = true
	close(w.abandoned)
}

// stop ends the watch: the stall message, if the scenario stalled, and
// whether the agent was left running.
func (w *stallWatch) stop() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	w.t.Stop()
	w.r = nil // the suite keeps the watch, not the scenario's recorder
	return w.stall, w.gaveUp
}

// callHook runs Setup or Teardown, turning a panic into an error, in a
// goroutine of its own, marked as a hook's while it runs (enterHook), as
// State's and Settle's are: a tool it calls, with any context or none, is
// the harness preparing or clearing the world, no run's call (not even
// another suite's, active meanwhile). The mark is the goroutine's, not the
// context's: an agent that keeps Setup's context (a client built there)
// and calls a tool with it is still told by its goroutine.
//
// The goroutine of its own is what tells the goroutines the hook starts
// (seeding in parallel) from the test's: they descend from it
// (hooks.roots), and until the hook returns their calls are the hook's too.
// After, the goroutines it left running may serve an agent (a server
// Setup started, whose handlers call a tool, for this suite or, started
// once, for the package's tests) or not (a token refresher): they are
// told as any goroutine of no invocation (lookup), but for a call, without
// the agent's context, of one this scenario's Setup started, made while
// no delivery waits for it: a queue's worker, whose call is the world's
// work (worldWorker).
//
// t.FailNow or t.SkipNow in the hook (runtime.Goexit) ends its goroutine;
// callHook then ends the caller's the same way, as if the hook had run in
// it. w, when not nil, is the scenario's world, which counts the goroutine
// as the harness's (quietgates.go).
//
// A hook that has not returned after hookBound (one waiting for something
// only the agent would do) is left running, and its scenario fails with
// where it is blocked; the suite's later hooks fail at once (s.hookStall),
// so that a stuck Setup costs the bound once, not once per scenario.
func (s *Suite) callHook(w *world, name string, fn func(context.Context) error, ctx context.Context) error {
	if s.hookStall != "" {
		return errors.New(s.hookStall)
	}
	return s.callHookIn(w, name, fn, ctx, bubble.In())
}

// callHookIn is callHook where the caller knows whether its goroutine runs
// in a bubble (bubble.In).
func (s *Suite) callHookIn(w *world, name string, fn func(context.Context) error, ctx context.Context, inBubble bool) error {
	if s.hookStall != "" {
		return errors.New(s.hookStall)
	}
	inBubble = inBubble || s.inBubble
	// The channel is the suite's, made once, where a channel of its own
	// was two allocations a scenario (a channel of pointers has its buffer
	// apart; 86 of the ten-write suite's): every hook sends once and its callHook receives it, so that
	// it is empty when the next hook starts, but after a hook left running
	// (s.hookStall), which no later hook follows. Not in a bubble, which a
	// channel belongs to as a timer does (below).
	res := s.hookRes
	if res == nil || inBubble {
		res = make(chan hookResult, 1)
		if !inBubble {
			s.hookRes = res
		}
	}
	var gid atomic.Uint64 // the hook's goroutine, read only if it stalls
	hook := func() {
		gid.Store(goroutineID())
		if w != nil && name == "Setup" {
			w.hook(gid.Load()) // what it starts is the world's (worldsLocked)
		}
		r := hookResult{exited: true}
		defer func() { res <- r }()
		defer enterHook(true).leave()
		defer func() {
			if v := recover(); v != nil {
				r.err = fmt.Errorf("%s panicked: %v\n%s", name, v, debug.Stack())
				r.exited = false
			}
		}()
		r.err = fn(ctx)
		r.exited = false
	}
	if w != nil {
		w.start(hook, nil)
	} else {
		goHarness(hook)
	}
	bound := hookBound(s.cfg.stallTimeout())
	var t *time.Timer
	if inBubble {
		// A timer belongs to the bubble it was made in: one pooled in
		// an earlier scenario's bubble, or outside, ends the test binary
		// here ("select on synctest channel from outside bubble"), and
		// one made in a bubble (a suite the test runs inside
		// synctest.Test) and pooled ends it when a suite outside resets
		// it ("reset of synctest timer from outside bubble").
		t = time.NewTimer(bound)
		defer t.Stop()
	} else {
		t = hookTimers.Get().(*time.Timer)
		t.Reset(bound)
		defer func() {
			t.Stop()
			hookTimers.Put(t)
		}()
	}
	select {
	case r := <-res:
		if r.exited {
			goruntime.Goexit()
		}
		return r.err
	case <-t.C:
		id, where := gid.Load(), "unknown"
		for _, g := range snapshotSome(func(x, _ uint64) bool { return x == id }) {
			if g.id == id && g.stack != "" {
				where = fmt.Sprintf("%s at %s", g.state, g.where())
			}
		}
		s.hookStall = fmt.Sprintf("%s did not return within %v (goroutine %d, %s): it is left running, and every later scenario of the suite fails with this error; a hook must not wait for what only the agent does (if it is only slow, raise StallTimeout: hooks may run six times as long)", name, bound, id, where)
		return errors.New(s.hookStall)
	}
}

// hookResult is what a hook's goroutine tells callHook.
type hookResult struct {
	err    error
	exited bool // runtime.Goexit: t.FailNow, t.SkipNow
}

// hookTimers are stopped timers for callHook's bound, one per hook running,
// instead of a new timer for every scenario's Setup.
var hookTimers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

// returnState says whether the run reads State once its deliveries
// returned (judge.noteReturn): in the baseline, and where the baseline saw
// the state change outside every traced write with no Settle given, the
// only runs whose repeats it may judge (judgeRepeatsIn).
func (s *Suite) returnState(r *recorder, sc Scenario) bool {
	if r.judge == nil || r.aborted.Load() {
		return false
	}
	return sc.Kind == ScenarioBaseline || s.base != nil && len(s.base.gaps) > 0 && s.cfg.settle == nil
}

// teardownAfterSetup runs, when a Setup failed after done others
// succeeded, the Teardowns given before it: what those Setups started (a
// worker, a server) is stopped. Nothing runs when Setup was left running
// (s.hookStall): it may still be starting it.
func (s *Suite) teardownAfterSetup(ctx context.Context, done int) error {
	teardown := s.cfg.teardown(done)
	if teardown == nil || s.hookStall != "" {
		return nil
	}
	return s.callHook(nil, "Teardown", teardown, ctx)
}

// errorText is err.Error(), or, when its Error method panics (a nil
// pointer of an error type returned as an error: var e *MyErr; return e),
// the error's type and the panic: fmt would print "<nil>" for a nil one,
// which reads as no error at all.
func errorText(err error) (s string) {
	defer func() {
		if v := recover(); v != nil {
			what := "%T"
			if rv := reflect.ValueOf(err); rv.Kind() == reflect.Pointer && rv.IsNil() {
				what = "a nil %T"
			}
			s = fmt.Sprintf(what+" (its Error method panicked: %v)", err, v)
		}
	}()
	return err.Error()
}

// deliveryError says how delivery n failed with err: "delivery 2: " and
// errorText(err). An injected fault the agent returned as it was, as most
// do, is written in one piece, not its Error and then the line.
func deliveryError(n int, err error) string {
	if e, ok := err.(*InjectedError); ok && e != nil && e.Err == nil {
		return "delivery " + strconv.Itoa(n) + ": " + e.Fault.Op + e.says()
	}
	return "delivery " + strconv.Itoa(n) + ": " + errorText(err)
}

// stoppedEarly returns a note for each delivery of a duplicate delivery
// that did not reach the calls another delivery (or the baseline) made:
// it returned an error no injected fault caused, having made fewer traced
// calls, and its last call, if any, did not fail. Such a delivery was
// stopped by the world, not by what it saw of the other's work: its model
// API answered 429 past its client's retries, before any tool call (red
// team rtL, R2: in 1 of 30 runs of a concurrent delivery that shared a
// rate limiter, whose other delivery's two calls were then judged alone,
// "ok"), or between two turns. The scenario then holds one delivery's
// work, not two of the same, and proves nothing of what only two
// deliveries show: a check-then-act at the sink passed in those runs, and
// the verdict flipped between runs. A delivery that makes fewer calls and
// returns nil (it read, found the other's booking and stopped; it waited
// on the agent's lock and found the work done) was tested, as was one
// whose last call failed and whose error is, most likely, that call's (a
// sink refusing the second booking).
func (s *Suite) stoppedEarly(tr *Trace, errs []error) []string {
	ref := 0
	if s.base != nil {
		ref = len(s.base.Ops)
	}
	calls := make([]int, len(errs)+1)
	last := make([]*Operation, len(errs)+1)
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.Invocation < 1 || o.Invocation > len(errs) {
			continue
		}
		calls[o.Invocation]++
		if last[o.Invocation] == nil || o.Seq > last[o.Invocation].Seq {
			last[o.Invocation] = o
		}
	}
	var notes []string
	for n := 1; n <= len(errs); n++ {
		err := errs[n-1]
		var injected *InjectedError
		if err == nil || errors.As(err, &injected) || last[n] != nil && last[n].Error != "" {
			continue
		}
		most, whose := ref, "the baseline"
		for j := 1; j <= len(errs); j++ {
			if j != n && calls[j] >= most {
				most, whose = calls[j], fmt.Sprintf("delivery %d", j)
			}
		}
		if calls[n] >= most {
			continue
		}
		where := "before any traced call"
		if o := last[n]; o != nil {
			where = fmt.Sprintf("after %d traced call(s), the last %s", calls[n], o.ID)
		}
		notes = append(notes, fmt.Sprintf("duplicate delivery: delivery %d stopped %s with an error no injected fault caused (%s), where %s made %d: the world stopped it (a model API's 429 past its client's retries, a network error), not the other delivery's work, so this scenario did not test two deliveries of the same work and proves nothing of what only they show (a check-then-act)",
			n, where, errorText(err), whose, most))
	}
	return notes
}

// hookBound is how long Setup or Teardown may run: six times the stall
// bound (a minute by default: a Setup may start a database).
func hookBound(stall time.Duration) time.Duration { return 6 * stall }

// outlived names goroutines the baseline started that were still there
// after it (keep-alive connections, workers): a bubble could not end.
func outlived(w *world, tr *Trace) string {
	for _, g := range w.ours(snapshotGoroutines(), goroutineID()) {
		if g.atGate() {
			continue
		}
		return fmt.Sprintf("goroutine %d started during the baseline outlived it (at %s)", g.id, g.where())
	}
	return ""
}

// testHookRunEnd, when set by a test, runs as a scenario's run ends, after
// the harness's waits and before the trace is taken.
var testHookRunEnd func(r *recorder)

// testHookDelivery, when set by a test, runs in the goroutine of each
// delivery of a concurrent scenario before the delivery begins (n counts
// from 1): a test holds one back to force an interleaving.
var testHookDelivery func(r *recorder, n int)

// deliver runs the invocations of a scenario and returns each one's error,
// in buf when it has room: the suite's own, for the deliveries it waits for
// in its goroutine (Suite.run), where a list made for each scenario was 49
// allocations of the ten-write suite.
func (s *Suite) deliver(ctx context.Context, r *recorder, sc Scenario, buf []error) []error {
	n := sc.Deliveries
	if n < 1 {
		n = 1
	}
	var errs []error
	if n <= cap(buf) {
		errs = buf[:n]
		clear(buf[:cap(buf)])
	} else {
		errs = make([]error, n)
	}
	if sc.Concurrent {
		lk, _ := r.gate.(*lockstep)
		var wg sync.WaitGroup
		r.mu.Lock()
		r.pending = n // in flight from now on (lookup)
		r.mu.Unlock()
		for i := 0; i < n; i++ {
			wg.Add(1)
			deliver := func() {
				defer wg.Done()
				if testHookDelivery != nil {
					testHookDelivery(r, i+1)
				}
				errs[i], _ = r.invokeNumbered(ctx, s.fn, i+1)
				if lk != nil {
					lk.finish(i + 1)
				}
			}
			if r.world != nil {
				r.world.spawn(deliver) // not the other delivery's (invocation.cancelled)
			} else {
				goHarness(deliver)
			}
		}
		wg.Wait()
		holdCarried(r)
		// The agent's context.AfterFunc callbacks are waited for once
		// both deliveries have returned, where one may run
		// (invocation.cancelled: by the count of created goroutines,
		// which one delivery's goroutines exiting cannot hide).
		if r.sched == nil {
			var parents []uint64
			r.mu.Lock()
			for _, inv := range r.all {
				if inv.callbacks {
					parents = append(parents, inv.gid)
				}
			}
			r.mu.Unlock()
			if len(parents) > 0 {
				settleAfterFuncs(parents)
			}
		}
		return errs
	}
	for i := 0; i < n; i++ {
		if r.aborted.Load() {
			// The scenario stalled: no later delivery begins.
			errs[i] = context.Canceled
			continue
		}
		errs[i], _ = r.invoke(ctx, s.fn)
		holdCarried(r)
		if i < n-1 {
			holdForWorld(r) // a redelivery comes later (redeliverlater.go)
		}
		if i < n-1 && s.leavesCallers && !r.aborted.Load() {
			// The next delivery comes after the calls of what this one
			// left running (untilLeftQuiet), as a queue's redelivery
			// comes later: at once, the two deliveries' fire-and-forget
			// calls overlapped when they took time (or the machine was
			// loaded), and a repeat that changed nothing was judged
			// with the first execution it overlapped.
			untilLeftQuiet(r, leftGrace)
		}
	}
	if r.didCrash() && !r.aborted.Load() {
		// The worker died after the effect: the invocation is delivered
		// again, as a queue would, later (redeliverlater.go).
		holdForWorld(r)
		err, _ := r.invoke(ctx, s.fn)
		errs = append(errs, err)
		holdCarried(r)
	}
	return errs
}

// holdCarried holds the delivery that just returned open, where it
// carried the run (Token: recorder.carries) and a Settle is given, until
// the Settle sees the world quiet: a server in the process (a consumer
// of a message bus whose publisher does not wait for the handler) serves
// what the delivery sent after it returned, and its calls are the
// delivery's (Resolve). Without the wait, they came before the next
// delivery, the restart's decision and the run's end, or after, as the
// Go scheduler happened to run the consumer: one agent's baseline traced
// nothing on one run and was ok on the next, and a crash of the
// consumer's call was followed by a restart or not (red team rtY #4). A
// crash of a delivery ends the wait, the restart's to go on. The
// Settle's error is not kept here: the run's own Settle, at its end,
// meets it again and records it.
func holdCarried(r *recorder) {
	if !r.carries.Load() || r.judge == nil || r.aborted.Load() {
		return
	}
	if r.judge.settle == nil {
		if r.judge.carriedHold > 0 {
			holdCarriedStill(r)
		}
		return
	}
	r.mu.Lock()
	x := r.rareLocked()
	invs := r.all[x.held:]
	x.held = len(r.all)
	r.mu.Unlock()
	ctx, cancel := context.WithCancel(r.judge.halt.ctx)
	defer cancel()
	for _, inv := range invs {
		// The deliveries that returned since the last hold: one that
		// crashed, before or during the wait, ends it.
		defer context.AfterFunc(inv.haltContext(), cancel)()
	}
	defer enterHook(false).leave()
	_ = r.judge.settle(ctx)
}

// holdCarriedStill is holdCarried where no Settle is given but the
// baseline's server called for its delivery after that returned
// (judge.carriedHold): the delivery is held until the state held still for
// carriedHold with no call of the run in flight, within endStillMax past
// that, or until a crash or the scenario's abandon. Without the hold, a
// consumer that took the message 1 ms after the publisher returned called
// after the run's end was read, on most runs: the run's end said the
// charge was never made, a missing_write of a correct agent
// (TestConsumerCallAfterTheRunWithoutASettle). A call that comes later
// still is the run's late call (recorder.dropTokens): the scenario is
// inconclusive and says to give a Settle. If the state did not hold still
// within the bound, the run's end says nothing of what the server had
// still to do (Trace.carriedRestless).
func holdCarriedStill(r *recorder) {
	j := r.judge
	r.mu.Lock()
	x := r.rareLocked()
	invs := r.all[x.held:]
	x.held = len(r.all)
	r.mu.Unlock()
	halted := func() bool {
		if r.aborted.Load() {
			return true
		}
		for _, inv := range invs {
			if inv.dead.Load() || inv.halting.Load() {
				return true
			}
		}
		return false
	}
	s, err := j.snapshot()
	if err != nil {
		return
	}
	since := time.Now()
	for deadline := since.Add(j.carriedHold + endStillMax); time.Now().Before(deadline); {
		endSleep(endPoll)
		if halted() {
			return
		}
		again, err := j.snapshot()
		if err != nil {
			return
		}
		if again != s || r.callsInFlight() {
			s, since = again, time.Now()
			continue
		}
		if time.Since(since) >= j.carriedHold {
			return
		}
	}
	r.mu.Lock()
	r.rareLocked().carriedRestless = true
	r.mu.Unlock()
}

// analyze turns a scenario's trace into findings.
func (s *Suite) analyze(res *Result, tr *Trace, sc Scenario, claimed bool) {
	add := func(f Finding) {
		f.Scenario = sc.Name
		f.Replay = res.Replay
		res.Findings = append(res.Findings, f)
	}
	for _, p := range tr.Panics {
		where := "the agent"
		ops := []string(nil)
		if p.Op != "" {
			where = "tool " + p.Op
			ops = []string{p.Op}
		}
		msg := fmt.Sprintf("%s panicked: %s", where, p.Value)
		if p.exited {
			// Not as in production: there the panic unwinds the
			// goroutine, and a recover of the agent's (a dispatcher's)
			// turns it into an answer; runtime.Goexit runs no recover.
			msg += fmt.Sprintf("; %s has no error result to return the panic through, so the suite ended the goroutine that called it (runtime.Goexit, which keeps the test binary alive where nothing recovers), and a recover in that goroutine did not run: if something waits for that goroutine's answer (a dispatcher's channel), it waits for good and the scenario stalls; give %s an error result, which gets a *runtime.PanicError", p.Op, p.Op)
		}
		add(Finding{Code: CodeAgentPanic, Severity: SeverityError, Ops: ops, Stack: p.Stack, Message: msg})
	}

	// The baseline in this scenario's names, where its Setup named the
	// world afresh (rename.go).
	// Learned when a check first needs it: most scenarios of most agents
	// need none (no State, no ExactlyOnce, no retry under a new identity).
	var (
		names   renaming
		learned bool
	)
	namesOf := func() renaming {
		if !learned && sc.Kind != ScenarioBaseline {
			names, learned = learnRenaming(&s.baseNames, s.base, tr), true
		}
		return names
	}

	// Duplicate effects: one op, one identity, more than one execution
	// that had an effect (effects.go). An identity that was the zero
	// value in every call is told apart by the arguments first
	// (zeroidentity.go).
	s.zeroIdentities(tr, sc, add)
	from := len(res.Findings)
	s.duplicates(res, tr, sc, namesOf, add)
	s.zeroIdentityNote(res, from)
	s.resentInside(res, tr, sc, add) // a request its client sent again inside a call (resent.go)

	s.visibility(tr, add)
	if len(tr.Unattributed) > 0 {
		res.Inconclusive = true
	}
	s.stillRunning(res, tr, add)
	s.identityPanicked(tr, add)
	s.unknownRepeats(res, tr, sc) // unknownrepeat.go

	stale := staleReplays(res, tr, len(s.cfg.setups) == 0) // writes replayed from a world not fresh (stalereplay.go)
	if why := staleFault(tr, sc, stale); why != "" {
		res.FaultFired = false
		add(Finding{Code: CodeFaultNotTriggered, Severity: SeverityWarning, Ops: []string{sc.Fault.Op},
			Message: fmt.Sprintf("%s fired %s; the scenario proves nothing", sc.Fault, why)})
	} else if sc.Fault.Kind != FaultNone && !tr.Fired {
		why := tr.FaultNote
		if why == "" && slices.Contains(s.afterReturnOps, sc.Fault.Op) {
			why = fmt.Sprintf("in the baseline, %s was called after the agent had returned, by a goroutine it left running, and here it had not been called when the run ended: a call that comes later is untraced, and the scenario's goroutine_leak warning says so", sc.Fault.Op)
		}
		if why == "" && s.carriedLag > 0 && s.cfg.settle == nil {
			why = fmt.Sprintf("in the baseline, a server in the process called %s with the run carried (runtime.Resolve) after the delivery had returned (a consumer of a message it sent), and here it had not been called when the run ended, though each delivery was held until the state had held still for twice the time the baseline's server took to call: a call that comes later is the run's late call, untraced (a goroutine_leak warning where it came before the suite's report); give a Settle that waits for the bus to drain (testkit.SettleUntil)", sc.Fault.Op)
		}
		if why == "" {
			why = fmt.Sprintf("the agent never made call %s#%d in this scenario", sc.Fault.Op, sc.Fault.Occurrence)
		}
		res.Inconclusive = true
		add(Finding{Code: CodeFaultNotTriggered, Severity: SeverityWarning, Ops: []string{sc.Fault.Op},
			Message: fmt.Sprintf("%s was planned but did not fire: %s; the scenario proves nothing", sc.Fault, why)})
	}

	if s.base != nil && sc.Kind != ScenarioBaseline {
		s.identityUnstable(tr, sc.Kind, namesOf, add)
		if s.cfg.exactlyOnce && claimed {
			s.missingWrites(tr, namesOf(), stale, add)
		} else if claimed && s.cfg.state != nil {
			s.missingByState(res, tr, sc.Kind, namesOf(), stale, add) // missingstate.go
		}
	}
}

// visibility reports what the harness could not see: calls whose identity
// could not be encoded (invisible to duplicate detection), tools given a
// context that is not the agent's, calls refused because no run could be
// told. The first two are reported once per suite, a refusal in every
// scenario it happened in.
func (s *Suite) visibility(tr *Trace, add func(Finding)) {
	once := func(key string) bool {
		if s.seenOnce[key] {
			return false
		}
		if s.seenOnce == nil {
			s.seenOnce = map[string]bool{}
		}
		s.seenOnce[key] = true
		return true
	}
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.IdentityError != "" && strings.HasSuffix(o.IdentityError, identityMissingText) {
			if once("identity missing\x00" + o.Name) {
				add(Finding{Code: CodeIdentityMissing, Severity: SeverityError, Ops: []string{o.Name}, Calls: []string{o.ID},
					Message: fmt.Sprintf("%s: the %s (call %s): its identity is unknown, so a repeat of it cannot be told from another write, and its calls are left out of duplicate detection; take the identity from arguments every call has, or give an IdentityFunc that handles their absence", o.Name, o.IdentityError, o.ID)})
			}
			continue
		}
		if o.IdentityError != "" && len(o.IdentityPanic) == 0 && once("identity\x00"+o.Name) {
			add(Finding{Code: CodeIdentityUnencodable, Severity: SeverityError, Ops: []string{o.Name}, Calls: []string{o.ID},
				Message: fmt.Sprintf("the identity of %s cannot be encoded (%s): its calls are invisible to duplicate detection, so retries of it cannot be judged; make the identity a string, number, bool or a struct of them", o.Name, o.IdentityError)})
		}
	}
	var plain, fresh []string // the sites of plain detached calls, and those not reported yet
	for _, site := range tr.Detached {
		if slices.Contains(tr.odd().handlerSites, site) {
			if once("detached\x00" + site) {
				add(Finding{Code: CodeContextDetached, Severity: SeverityWarning,
					Message: fmt.Sprintf("a tool was called from %s by a handler of this process (an HTTP or gRPC server) serving the agent's request, with its request's context (the agent's ctx cannot cross the network): the call was attributed to the agent's call in flight whose tool waits for the answer (to its delivery when none does), but the agent's cancellation (a crash, a deadline) does not reach the handler, as in production", shortSite(site))})
			}
			continue
		}
		if slices.Contains(tr.odd().serverSites, site) {
			if once("detached\x00" + site) {
				add(Finding{Code: CodeContextDetached, Severity: SeverityWarning,
					Message: fmt.Sprintf("a tool was called from %s by a goroutine that Setup started (a server of the world: a message bus's subscription, a consumer, a pool's worker) while the agent waited for its answer, with a context that does not come from the agent's: the call was attributed to the delivery in flight, but with two deliveries in flight together it cannot be told whose, and the agent's cancellation (a crash, a deadline) does not reach it; where the request crosses a transport that carries no Go context, carry the run: put runtime.Token(ctx) in the request (a message's headers, a job's payload) and take the handler's context from runtime.Resolve(ctx, token)", shortSite(site))})
			}
			continue
		}
		plain = append(plain, site)
		if once("detached\x00" + site) {
			fresh = append(fresh, site)
		}
	}
	if len(fresh) > 0 {
		// Where every call had such a context, the cause is one, said
		// once for the suite (a retry's new line in a later scenario is
		// no other cause).
		if f, every := detachedFinding(tr, plain, fresh); !every || once("detached\x00every call") {
			add(f)
		}
	}
	if ops := tr.odd().worldOps; len(ops) > 0 {
		var fresh []string
		for _, op := range ops {
			if once("world\x00" + op) {
				fresh = append(fresh, op)
			}
		}
		if len(fresh) > 0 {
			slices.Sort(fresh)
			add(s.worldWorkerFinding(fresh, tr.odd().worldSites))
		}
	}
	// A refused call is every scenario's that it happened in: the
	// scenario did not see all of its calls, and may not pass as safe
	// (printing a problem once is testkit's, by GroupKey).
	refused := map[string]bool{}
	for i, msg := range tr.Refused {
		if !refused[msg] {
			refused[msg] = true
			add(Finding{Code: CodeContextDetached, Severity: SeverityError, Ops: opOf(tr.odd().refusedOps, i), Message: msg})
		}
	}
	// So is a call the run could not tell was its own: a warning, and the
	// scenario is inconclusive (analyze).
	for i, msg := range tr.Unattributed {
		if !refused[msg] {
			refused[msg] = true
			add(Finding{Code: CodeContextDetached, Severity: SeverityWarning, Ops: opOf(tr.odd().unattributedOps, i), Message: msg})
		}
	}
}

// worldWorkerFinding tells, once per suite and op, that ops were called by
// a goroutine Setup started, without the agent's context (worldWorker):
// work the world did for the agent, run untraced. With State, what it
// changed was judged, and the finding is context (info); without State,
// nothing judged it, and it is a warning. Neither makes a scenario
// inconclusive: every call the agent made was traced. The advice is what
// a queue's worker allows: its context cannot be the agent's (the job
// outlives the delivery that queued it), so it says to trace the enqueue
// and wait for the drain, not to pass the agent's ctx.
func (s *Suite) worldWorkerFinding(ops, sites []string) Finding {
	sites = slices.Clone(sites)
	slices.Sort(sites)
	sites = slices.Compact(sites)
	at := ""
	if len(sites) > 0 {
		at = " at " + strings.Join(sites, ", ")
	}
	list := strings.Join(ops, ", ")
	head := fmt.Sprintf("%s was called%s by a goroutine that Setup started, with a context that does not come from the agent's: a worker of the world (a job queue's, carrying out work the agent queued), whose calls are the world's work, not calls the agent makes, so they ran as in production, untraced, with no fault planned on them and no gate; ", list, at)
	f := Finding{Code: CodeContextDetached, Severity: SeverityInfo, Ops: ops}
	switch {
	case s.cfg.state == nil:
		f.Severity = SeverityWarning
		f.Message = head + "with no testkit.State, nothing judged what they changed, and only the agent's own calls were (each execution of the call that queues the work counting as an effect): give State, with a Settle that waits for the worker to drain (testkit.SettleUntil)"
	case s.cfg.settle == nil:
		f.Message = head + "State judged what they changed, in the windows of the agent's writes and in the end state; give a Settle that waits for the worker to drain (testkit.SettleUntil): without one, the end is read once the state held still, and a job the worker carries out later is not in it"
	default:
		f.Message = head + "State judged what they changed, in the windows of the agent's writes and in the end state the Settle waited for"
	}
	return f
}

// opOf returns ops[i] as a finding's Ops, or nil past the end (a trace
// read back from JSON has no ops for its refusals).
func opOf(ops []string, i int) []string {
	if i < len(ops) {
		return []string{ops[i]}
	}
	return nil
}

// identityUnstable finds retries that changed identity: a write call whose
// answer the agent did not get (failed or lost), followed in the same
// delivery by a call of the same op from the same call site with another
// identity that sends some of the same arguments again (sameWork), where
// the two identities are not both among the baseline's (so it is not a
// loop over distinct work items).
func (s *Suite) identityUnstable(tr *Trace, kind string, namesOf func() renaming, add func(Finding)) {
	var renamed map[[2]string]bool // the baseline's writes in this scenario's names, where they differ
	inBase := func(op, id string) bool {
		names := namesOf()
		if names == nil {
			return s.baseNames.of(s.base).writes[[2]string{op, id}]
		}
		if renamed == nil {
			renamed = map[[2]string]bool{}
			for i := range s.base.Ops {
				if o := &s.base.Ops[i]; o.Kind == KindWrite {
					renamed[[2]string{o.Name, names.identity(o.Identity)}] = true
				}
			}
		}
		return renamed[[2]string{op, id}]
	}
	// reported holds the ops with a finding; warned, those whose finding is
	// only the warning that a retry through a dispatcher's line cannot be
	// told from other work: a delivery made again that repeats the first
	// one's work under a fresh key is still the error below (a crashed
	// invocation's retry warned of, then its restart's new ticket).
	var reported, warned map[string]bool
	for i := range tr.Ops {
		a := &tr.Ops[i]
		if a.Kind != KindWrite || a.Observation == ObservationReceived || a.Site == "" {
			continue
		}
		for j := i + 1; j < len(tr.Ops); j++ {
			b := &tr.Ops[j]
			if b.Name != a.Name || b.Invocation != a.Invocation || b.Site != a.Site {
				continue
			}
			if b.Identity != a.Identity && otherWork(s.base, tr, a, b, j) {
				continue // another goroutine's item from the same line: a's retry may follow
			}
			if b.Identity != a.Identity && !(inBase(a.Name, a.Identity) && inBase(a.Name, b.Identity)) && !reported[a.Name] && sameWork(a, b) && !keyFromSink(tr, a, b, i, j) && !baseItemsUnderSinkName(s.base, tr, a, b, j) {
				if reported == nil {
					reported = map[string]bool{}
				}
				reported[a.Name] = true
				// Every call of a framework's tool has the adapter's
				// line, and every call of a tool registry's entry has
				// that entry's line, reached from wherever the agent
				// dispatched it: the site cannot tell a retry from
				// other work (an escalation ticket opened after a
				// failure). A retry comes again the same way; a call
				// reached from elsewhere (its frames above the site
				// differ) is other work, as far as the suite can tell.
				via := ""
				switch {
				case a.viaAdapter:
					via = "through a framework every call of a tool comes through the adapter"
				case len(a.path()) > 1 && len(b.path()) > 1 && !slices.Equal(a.path(), b.path()):
					via = fmt.Sprintf("both came through %s, which the agent reached from different places (a dispatcher's line, as a tool registry's), so the suite cannot tell a retry from other work", shortSite(a.Site))
				}
				if via != "" && restatedID(a, b) {
					// The same id restated in another case or with
					// spaces around it (a model retyping it), and State
					// saw the attempt and its retry each change the
					// world: a key made from the id as given lets the
					// sink run the retry as new work. Only warned of,
					// a charge made twice passed 6 runs of 6 through
					// the Anthropic and Eino adapters (red team rR #5).
					add(Finding{Code: CodeDuplicateWrite, Severity: SeverityError, Ops: []string{a.Name},
						Identities: []string{a.Identity, b.Identity}, Calls: []string{a.ID, b.ID},
						Message: fmt.Sprintf("%s was called again with identity %s after attempt %s with identity %s %s: the same id restated (in another case, or with spaces), and State saw each change the world (%s: %s; %s: %s): the sink ran the retry as new work; make the key from the id normalized as the sink compares it (strings.ToUpper, strings.TrimSpace), or have the sink compare ids so",
							a.Name, b.Identity, a.ID, a.Identity, unanswered(a), a.ID, clip(a.StateChange, maxChange/2), b.ID, clip(b.StateChange, maxChange/2))})
					break
				}
				if via != "" {
					if warned == nil {
						warned = map[string]bool{}
					}
					warned[a.Name] = true
					add(Finding{Code: CodeIdentityUnstable, Severity: SeverityWarning, Ops: []string{a.Name},
						Identities: []string{a.Identity, b.Identity}, Calls: []string{a.ID, b.ID},
						Message: fmt.Sprintf("%s was called again with identity %s, and some of the same arguments, after attempt %s with identity %s %s: %s; if it is a retry, a fresh key per attempt lets the sink run it as new work: derive the key from the work (session, intent, ids)",
							a.Name, b.Identity, a.ID, a.Identity, unanswered(a), via)})
					break
				}
				add(Finding{Code: CodeIdentityUnstable, Severity: SeverityError, Ops: []string{a.Name},
					Identities: []string{a.Identity, b.Identity}, Calls: []string{a.ID, b.ID},
					Message: fmt.Sprintf("%s was retried from the same call site (%s) with identity %s after attempt %s with identity %s %s: a fresh key per attempt lets the sink run the retry as new work; derive the key from the work (session, intent, ids)",
						a.Name, shortSite(a.Site), b.Identity, a.ID, a.Identity, unanswered(a))})
			}
			break
		}
	}
	if !redelivers(kind) {
		return
	}
	// A delivery made again repeats the first one's work: a write of a
	// later delivery that sends some of the same arguments as a write the
	// first made from the same site, under an identity neither the first
	// delivery nor the baseline had, got a key made afresh for the
	// delivery (an id generated where the message is handled): the sink
	// runs the redelivery as new work.
	//
	// Two deliveries at once are alike: which of them the sink answered
	// with the baseline's ids (a reservation's sequence number) is a
	// race, and a write of the first delivery under a fresh identity,
	// beside the second's under the baseline's, is the same fault. Only
	// the second was looked at, and the finding came in 9 of 12 runs of
	// red team rtX's saga (TestRedeliveredFreshKeyEitherDeliveryAtOnce).
	concurrent := kind == ScenarioDuplicateConcurrent
	for j := range tr.Ops {
		b := &tr.Ops[j]
		if b.Kind != KindWrite || b.Invocation < 2 && !(concurrent && b.Invocation == 1) || b.Site == "" || b.Status != StatusSuccess || b.Replayed || reported[b.Name] && !warned[b.Name] {
			continue
		}
		other := 1 // the delivery b's is made again of
		if b.Invocation == 1 {
			other = 2
		}
		again := false // the other delivery made this call too
		for i := range tr.Ops {
			if a := &tr.Ops[i]; a.Invocation == other && a.Name == b.Name && a.Identity == b.Identity {
				again = true
				break
			}
		}
		if again || inBase(b.Name, b.Identity) {
			continue
		}
		for i := range tr.Ops {
			a := &tr.Ops[i]
			if a.Invocation != other || a.Name != b.Name || a.Site != b.Site || a.Status != StatusSuccess && !landed(a) || !sameWork(a, b) || keyFromSink(tr, a, b, -1, j) || baseItemsUnderSinkName(s.base, tr, a, b, j) {
				continue
			}
			if reported == nil {
				reported = map[string]bool{}
			}
			reported[b.Name] = true
			delete(warned, b.Name)
			sev := SeverityError
			if a.viaAdapter {
				sev = SeverityWarning // the adapter's line: other work, for all the suite can tell
			}
			add(Finding{Code: CodeIdentityUnstable, Severity: sev, Ops: []string{b.Name},
				Identities: []string{a.Identity, b.Identity}, Calls: []string{a.ID, b.ID},
				Message: redeliveredKeyMessage(tr, a, b, j)}) // unstablemsg.go
			break
		}
	}
}

// absorbedBeside reports whether write o, the first execution of its op
// and identity, was made in another delivery too, where it was absorbed,
// and never judged a duplicate: of two deliveries at once, which one's
// create_order came first is a race, and the other's is the repeat that
// left nothing of its own. The sink's answer to o is then the answer to
// the one order made, as the repeat's is where it came second.
func absorbedBeside(tr *Trace, o *Operation) bool {
	if o.Repeat != "" {
		return false
	}
	absorbed := false
	for k := range tr.Ops {
		x := &tr.Ops[k]
		if x == o || x.Name != o.Name || x.Identity != o.Identity {
			continue
		}
		switch {
		case x.Repeat == RepeatDuplicate:
			return false
		case x.Repeat == RepeatAbsorbed && x.Invocation != o.Invocation:
			absorbed = true
		}
	}
	return absorbed
}

// keyFromSink reports whether what b's identity holds that a's does not
// came back from the sink: the answer of a call of b's delivery made
// before b, after a (tr.Ops[i], or from the delivery's start when i is
// -1), that repeated an earlier call and was judged to have left nothing
// of its own (absorbed). An agent that runs its tools in a transaction of
// its own, rolled back and tried again, makes the order again, under the
// id the sink gives it this time (create_order's RETURNING id), and
// writes its lines under that id: no key the agent made afresh. Where the
// repeat that answered had an effect of its own (a second payment intent
// made for a retry, whose confirmation may charge twice), or was not
// judged, the new key still counts.
func keyFromSink(tr *Trace, a, b *Operation, i, j int) bool {
	had := identityLeaves(a.Identity)
	fresh := identityLeaves(b.Identity)
	for t := range fresh {
		if had[t] {
			delete(fresh, t)
		}
	}
	if len(fresh) == 0 {
		return false
	}
	for k := i + 1; k < j && len(fresh) > 0; k++ {
		o := &tr.Ops[k]
		if o.Invocation != b.Invocation || o.Result == nil || o.Repeat != RepeatAbsorbed && !absorbedBeside(tr, o) {
			continue
		}
		enc, err := json.Marshal(o.Result)
		if err != nil {
			continue
		}
		for t := range identityLeaves(string(enc)) {
			delete(fresh, t)
		}
	}
	return len(fresh) == 0
}

// otherWork reports whether call b (tr.Ops[j]), made from the line of call
// a after a failed, does other work than a, by its identity, a list or an
// object: every part of it differs from a's, and each of b's is a value
// the baseline's calls of the op held at that part, as they held a's (an
// item: apple, then pear), or one an earlier call of the run answered (an
// order's id that create_order gave) or a write before a was keyed by (an
// order's id the agent made and create_order was given: /tmp/rt29 s1
// TestClientID, identity_unstable on every run). Not any value such a
// write sent: an agent that saved a customer's cards and the keys of each
// attempt first, then failed over to the next card under the next key,
// charged twice and passed (third red team, /tmp/rt37 r3). Nor a write
// between a and b: an agent that starts over after a failed confirm_cart,
// with a new cart and intent it names and opens, confirms again under
// names only those writes sent, and charges twice (red team, /tmp/rt35 p1
// TestCartRestartBug). Two goroutines adding one order's line each, keyed by the order's random id and the item, call from one
// line; the other order's call came between a failed call and its retry,
// and was taken for the retry under a fresh key (red team, /tmp/rt29 s1
// TestServerID: identity_unstable, an error, on a correct agent in every
// fault scenario). A part empty in both (the id of an order whose create
// failed) is neither.
//
// A retry re-sends part of a's identity (the item, the invoice) or holds a
// part new to the run and the baseline (a fresh key), and is still told:
// a first version that took any part the baseline held both values of for
// other work missed retries under a counter's next key ([apple, req-2],
// req-2 being pear's in the baseline) and a failover to another provider
// (second red team, /tmp/rt30 p1 to p3). Where b shares a part with a
// (another order's line of the same item), the suite cannot tell, and the
// finding stands.
func otherWork(base, tr *Trace, a, b *Operation, j int) bool {
	if base == nil || !composite(a.Identity) || !composite(b.Identity) {
		return false
	}
	pa, pb := identityParts(a.Identity), identityParts(b.Identity)
	if pa == nil || pb == nil || len(pa) != len(pb) {
		return false
	}
	var (
		held  map[string]map[string]bool // part -> values the baseline's calls of the op held there
		known map[string]bool            // the scalars calls before b were answered, or writes before a were keyed by
	)
	differ := false
	for k, va := range pa {
		vb, ok := pb[k]
		switch {
		case !ok:
			return false
		case va == vb && defaultValue(va):
			continue // an empty id in both (an order whose create failed) says nothing
		case va == vb:
			return false
		}
		differ = true
		if held == nil {
			held = map[string]map[string]bool{}
			for i := range base.Ops {
				o := &base.Ops[i]
				if o.Kind != KindWrite || o.Name != a.Name {
					continue
				}
				for k, v := range identityParts(o.Identity) {
					if held[k] == nil {
						held[k] = map[string]bool{}
					}
					held[k][v] = true
				}
			}
		}
		if held[k][va] && held[k][vb] {
			continue
		}
		if known == nil {
			known = map[string]bool{}
			beforeA := true
			for i := range tr.Ops[:j] {
				o := &tr.Ops[i]
				if o == a {
					beforeA = false
				}
				if o.Result != nil {
					if enc, err := json.Marshal(o.Result); err == nil {
						maps.Copy(known, identityLeaves(string(enc)))
					}
				}
				if o.Kind == KindWrite && beforeA && o.Identity != "" {
					maps.Copy(known, identityLeaves(o.Identity))
				}
			}
		}
		if !known[vb] {
			return false
		}
	}
	return differ
}

// baseItemsUnderSinkName reports whether a and b (tr.Ops[j]) are two of
// the baseline's writes of their op, x and y, under the name the sink gave
// this run for what it named otherwise in the baseline: where a and b
// differ, a holds x's value and b y's (apple, then pear); where they agree,
// x and y agree too, on the same value or on the one a call of the
// baseline with the same identity answered at the same place as a call of
// the run before b answered a's (create_order "ORD-1" answered order 1 in
// the baseline and 4 here). That is inBase's test under the one renaming
// the answers justify, read at the identities' places alone: the
// scenario's renaming (learnRenaming) renames a value by its text
// wherever it stands, and leaves one out that the scenario also carries
// elsewhere, so where the baseline's order was numbered 1 and each line's
// quantity was 1 (a fresh database's first sequence number) the lines
// were not read as the baseline's, and the pear line after a failed apple
// was a retry under a fresh key: identity_unstable, an error, on the first
// run against a fresh database and never after (red team, /tmp/rtP #10,
// 5/5 fresh, 0/27 later). A retry whose differing part is new to the
// baseline (a fresh key), or that keeps a part the baseline's two items
// did not share (the item under a counter's next key), is no pair of the
// baseline's, and is still told.
func baseItemsUnderSinkName(base, tr *Trace, a, b *Operation, j int) bool {
	if base == nil || !composite(a.Identity) || !composite(b.Identity) {
		return false
	}
	pa, pb := identityParts(a.Identity), identityParts(b.Identity)
	if pa == nil || pb == nil || len(pa) != len(pb) {
		return false
	}
	shared := 0
	for k, va := range pa {
		vb, ok := pb[k]
		if !ok {
			return false
		}
		if va == vb {
			shared++
		}
	}
	if shared == 0 || shared == len(pa) {
		return false // otherWork's case, or the same identity
	}
	// sinkNamed reports whether the run's value rv at a shared part is
	// the baseline's bv by the sink's answers.
	answered := map[[2]string]bool{} // the baseline's value, the run's
	learned := false
	sinkNamed := func(bv, rv string) bool {
		if !learned {
			learned = true
			for i := range tr.Ops[:j] {
				o := &tr.Ops[i]
				if o.Kind != KindWrite || o.Status != StatusSuccess || o.Result == nil {
					continue
				}
				rc, err := Canonical(o.Result)
				if err != nil {
					continue
				}
				rl := jsonLeaves(rc)
				for n := range base.Ops {
					x := &base.Ops[n]
					if x.Kind != KindWrite || x.Name != o.Name || x.Identity != o.Identity || x.Status != StatusSuccess || x.Result == nil {
						continue
					}
					bc, err := Canonical(x.Result)
					if err != nil {
						continue
					}
					for path, bl := range jsonLeaves(bc) {
						if r, ok := rl[path]; ok {
							answered[[2]string{canonicalLeaf(bl), canonicalLeaf(r)}] = true
						}
					}
				}
			}
		}
		return answered[[2]string{canonicalLeaf(bv), canonicalLeaf(rv)}]
	}
	var items []map[string]string
	for n := range base.Ops {
		if x := &base.Ops[n]; x.Kind == KindWrite && x.Name == a.Name {
			if px := identityParts(x.Identity); len(px) == len(pa) {
				items = append(items, px)
			}
		}
	}
	for _, px := range items {
		for _, py := range items {
			match := true
			for k, va := range pa {
				vb := pb[k]
				if va == vb {
					match = px[k] == py[k] && (px[k] == va || sinkNamed(px[k], va))
				} else {
					match = px[k] == va && py[k] == vb
				}
				if !match {
					break
				}
			}
			if match {
				return true
			}
		}
	}
	return false
}

// canonicalLeaf returns a scalar's JSON in one spelling (a number 4 as
// read from an identity and from an answer), or the text as given.
func canonicalLeaf(v string) string {
	if d, err := decodeState(v); err == nil {
		return encode(d)
	}
	return v
}

// composite reports whether an encoded identity is a list or an object.
func composite(enc string) bool {
	return enc != "" && (enc[0] == '[' || enc[0] == '{')
}

// identityParts returns the parts of an encoded identity that is a list or
// an object, as their JSON, by index or member name; nil for any other.
func identityParts(enc string) map[string]string {
	v, err := decodeState(enc)
	if err != nil {
		return nil
	}
	switch x := v.(type) {
	case []any:
		out := make(map[string]string, len(x))
		for i, e := range x {
			out[strconv.Itoa(i)] = encode(e)
		}
		return out
	case map[string]any:
		out := make(map[string]string, len(x))
		for k, e := range x {
			out["."+k] = encode(e)
		}
		return out
	}
	return nil
}

// identityLeaves returns the scalars of an encoded identity (or result),
// at any depth, as their JSON, less the values any two share by default
// (defaultValue).
func identityLeaves(enc string) map[string]bool {
	out := map[string]bool{}
	v, err := decodeState(enc)
	if err != nil {
		return out
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		default:
			if t := encode(x); !defaultValue(t) {
				out[t] = true
			}
		}
	}
	walk(v)
	return out
}

// unanswered says how the agent was left without the answer of call a:
// an error came back (which, for all the agent knows, may have followed
// the effect), or nothing did.
func unanswered(a *Operation) string {
	if a.Observation == ObservationFailed {
		return "failed with an error"
	}
	return "got no answer"
}

// sameWork reports whether call b may re-send the work of call a: a retry
// under a fresh key sends the rest of the request again (the subject, the
// amount, the order), so some argument value, at any depth, is the same in
// both. Calls that share none (a message to another channel with another
// text, which an LLM agent's tool dispatcher sends from the one call site
// it has per tool) are other work. Values any two requests share by
// default (booleans, null, 0, "") say nothing of the work. Calls whose
// arguments cannot be told apart (none recorded, or nothing recorded but
// the key: the rest of the request rides in the receiver or a closure) may
// be a retry.
func sameWork(a, b *Operation) bool {
	la, lb := argLeaves(a), argLeaves(b)
	if len(la) == 0 || len(lb) == 0 || keyOnly(a, la) && keyOnly(b, lb) {
		return true
	}
	for p, v := range la {
		if w, ok := lb[p]; ok && w == v && !defaultValue(v) {
			return true
		}
	}
	return false
}

// keyOnly reports whether the only argument value of o that says
// anything of the work (not a default value) is its identity, a single
// scalar: a call that records its key and nothing else, like
// checkout(ctx, key) on a cart that holds the amount.
func keyOnly(o *Operation, leaves map[string]string) bool {
	var id any
	if json.Unmarshal([]byte(o.Identity), &id) != nil {
		return false
	}
	switch id.(type) {
	case map[string]any, []any:
		return false
	}
	key, _ := json.Marshal(id)
	if defaultValue(string(key)) {
		return false
	}
	found := false
	for _, v := range leaves {
		switch {
		case v == string(key):
			found = true
		case !defaultValue(v):
			return false
		}
	}
	return found
}

// defaultValue reports whether v, a scalar's JSON, is one that requests
// share without sharing work: true, false, null, 0 or "".
func defaultValue(v string) bool {
	switch v {
	case "true", "false", "null", "0", `""`:
		return true
	}
	return false
}

// argLeaves flattens a call's recorded arguments into their scalar values
// by path ("req.subject", "items.0"), encoded as JSON.
func argLeaves(o *Operation) map[string]string {
	raw, err := o.Args.MarshalJSON()
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(path+"."+strconv.Itoa(i), e)
			}
		default:
			b, _ := json.Marshal(x)
			out[path] = string(b)
		}
	}
	walk("", v)
	return out
}

// missingWrites finds baseline write identities that never took effect in a
// scenario where the agent said it succeeded.
func (s *Suite) missingWrites(tr *Trace, names renaming, stale map[string]bool, add func(Finding)) {
	done, replayed := map[string]bool{}, map[string]bool{}
	for i := range tr.Ops {
		// A replay from a key no execution of the run made (stale) did
		// not take effect in this world.
		if o := &tr.Ops[i]; o.Kind == KindWrite && o.Status == StatusSuccess {
			if stale[o.ID] {
				replayed[o.Name+"\x00"+o.Identity] = true
			} else {
				done[o.Name+"\x00"+o.Identity] = true
			}
		}
	}
	seen := map[string]bool{}
	for i := range s.base.Ops {
		o := &s.base.Ops[i]
		k := o.Name + "\x00" + names.identity(o.Identity)
		if o.Kind != KindWrite || o.Status != StatusSuccess || done[k] || seen[k] {
			continue
		}
		seen[k] = true
		id := names.identity(o.Identity)
		msg := fmt.Sprintf("%s for identity %s never took effect, yet the agent reported success: the work was silently dropped; return the error or retry with the same identity", o.Name, id)
		if replayed[k] {
			msg = fmt.Sprintf("%s for identity %s never took effect, yet the agent reported success: its sink only replayed it, from a key no execution of this run made (see the note), so the world Setup gave was not fresh; reset the idem store in Setup", o.Name, id)
			if len(s.cfg.setups) == 0 {
				msg = fmt.Sprintf("%s for identity %s never took effect, yet the agent reported success: its sink only replayed it, from a key no execution of this run made (see the note): no Setup was given, so the scenario ran in the world the one before it left; give testkit.Setup a function that builds a fresh world, a new idem store with it", o.Name, id)
			}
		}
		add(Finding{Code: CodeMissingWrite, Severity: SeverityError, Ops: []string{o.Name}, Identities: []string{id}, Message: msg})
	}
}

func (s *Suite) checkInvariants(res *Result, tr *Trace) {
	for _, inv := range s.cfg.invariants {
		err := callInvariant(inv.fn, tr)
		ir := InvariantResult{Name: inv.name, OK: err == nil}
		if err != nil {
			ir.Error = errorText(err)
			res.Findings = append(res.Findings, Finding{
				Code: CodeInvariantFailed, Severity: SeverityError, Scenario: res.Scenario, Replay: res.Replay,
				Message: fmt.Sprintf("invariant %q failed: %v", inv.name, err),
			})
		}
		res.Invariants = append(res.Invariants, ir)
	}
}

// callInvariant runs an invariant, turning a panic into its error.
func callInvariant(fn func(*Trace) error, tr *Trace) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("invariant panicked: %v\n%s", v, debug.Stack())
		}
	}()
	return fn(tr)
}

// Report assembles the report of what ran so far. A tool call that a
// goroutine the agent left running made after its scenario's run ended is
// reported here, as a goroutine_leak warning that makes that scenario
// inconclusive; one made after Report is not reported.
func (s *Suite) Report() *Report {
	s.reportLate()
	r := &Report{
		SchemaVersion: SchemaVersion, Name: s.name, Baseline: s.baseline,
		Results: append([]*Result{}, s.results...), Findings: []Finding{},
		AgentRuns: s.runs, Seed: s.cfg.seed, StartedAt: s.started, Duration: time.Since(s.started),
	}
	if s.baseline != nil {
		r.BaselineSucceeded = s.BaselineOK()
		if !r.BaselineSucceeded {
			r.BaselineFailure = s.baseline.Error
			if r.BaselineFailure == "" && len(s.base.Panics) > 0 {
				r.BaselineFailure = "panic: " + s.base.Panics[0].Value
			}
		}
	}
	r.tally()
	r.Notes = notRetried(append([]*Result{r.Baseline}, r.Results...), s.cfg.faultErr != nil) // retried.go; the baseline has no fault, but may note a retry inside a call
	_, unplanned := s.notPlanned()
	r.Notes = append(r.Notes, unplanned...)
	if s.BaselineOK() {
		_, same := sameCalls(s.base)
		r.Notes = append(r.Notes, same...) // samecall.go
	}
	if n := aloneNote(r.Results); n != "" {
		r.Notes = append(r.Notes, n) // gate.go
	}
	if s.cfg.state == nil {
		r.Notes = append(r.Notes, declaredUnchecked(r.Baseline, r.Results)...) // unchecked.go
	} else if n := s.stateNote(r.Duration); n != "" {
		r.Notes = append(r.Notes, n) // stateguard.go
	}
	if n := s.realTimeNote(r); n != "" {
		r.Notes = append(r.Notes, n) // virtualnote.go
	}
	if n := s.endsByOrderNote(); n != "" {
		r.Notes = append(r.Notes, n) // endsbyorder.go
	}
	r.Notes = append(r.Notes, earlyStalls(append([]*Result{r.Baseline}, r.Results...))...) // scenariocode.go
	r.Shard = s.shardPart()
	return r
}

// tally derives what a report counts from its baseline and results: the
// findings of all of them, the scenarios that are inconclusive or unsafe,
// the verdict and the problems. BaselineSucceeded must be set.
func (r *Report) tally() {
	// Sized first: grown by append, the list of a suite with a finding
	// in most scenarios (the ten-write agent's 40) was copied 7 times.
	n := 0
	if r.Baseline != nil {
		n += len(r.Baseline.Findings)
	}
	for _, res := range r.Results {
		n += len(res.Findings)
	}
	r.Findings = make([]Finding, 0, n)
	if r.Baseline != nil {
		r.Findings = append(r.Findings, r.Baseline.Findings...)
	}
	r.InconclusiveCount, r.UnsafeCount = 0, 0
	for _, res := range r.Results {
		r.Findings = append(r.Findings, res.Findings...)
		if res.Inconclusive {
			r.InconclusiveCount++
		}
		for _, f := range res.Findings {
			if f.Severity == SeverityError {
				r.UnsafeCount++ // an inconclusive scenario with an error finding is unsafe too
				break
			}
		}
	}
	r.FaultCount = len(r.Results)
	// No error finding (Errors), looked for without making their list.
	r.Safe = r.BaselineSucceeded && !slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Severity == SeverityError })
	r.Problems = GroupFindings(r.Findings) // one finding per problem (group.go)
}

func shortSite(site string) string {
	if i := strings.LastIndex(site, "/"); i >= 0 {
		return site[i+1:]
	}
	return site
}

// orderChecks finds the ordering hazards of one scheduled run: a call of
// an op that declares after= started before a call of that op returned,
// beside it (afterPair), two writes to one entity in flight together, and,
// after a partial batch failure, a call of the batch that had succeeded
// executed again.
func (s *Suite) orderChecks(res *Result, tr *Trace, sc Scenario) {
	add := func(f Finding) {
		f.Scenario, f.Replay = sc.Name, res.Replay
		res.Findings = append(res.Findings, f)
	}
	if sc.Kind == ScenarioPartialBatch {
		s.partialBatchReplay(res, tr, add)
		return
	}
	ops := tr.Ops
	nest := nestingOf(ops)
	rounds := roundsOf(sc.sched, ops)
	for i := range ops {
		for j := range ops {
			a, b := &ops[i], &ops[j]
			if i == j {
				continue
			}
			if len(b.After) > 0 {
				afterPair(ops, nest, rounds, a, b, add)
			}
			if !nest.together(a, b) {
				continue
			}
			// Two executions of one call (one op, one identity, the same
			// arguments) are the duplicate check's; two updates of one
			// identity that set something to other values (updatesConflict)
			// leave what lands last, and so do two ops that write one
			// identity (set_status(o1, shipped) beside cancel_order(o1)).
			if i < j && a.Kind == KindWrite && b.Kind == KindWrite && a.Entity != "" && a.Entity == b.Entity && (a.Identity != b.Identity || a.Name != b.Name || updatesConflict(a, b)) &&
				!contains(a.After, b.Name) && !contains(b.After, a.Name) { // an after= pair is reported as such
				// Named in one order in every schedule (by op, then
				// call), not in the order this one started them: the
				// report groups the schedules' findings by their ops.
				x, y := a, b
				if y.Name < x.Name || y.Name == x.Name && y.ID < x.ID {
					x, y = y, x
				}
				add(Finding{Code: CodeConcurrentWritesEntity, Severity: SeverityError,
					Ops: []string{x.Name, y.Name}, Identities: []string{x.Entity}, Calls: []string{x.ID, y.ID},
					Message: fmt.Sprintf("%s and %s write entity %s while both in flight (batch %d): the result depends on which lands last, even where this schedule ended well; serialize writes to one entity",
						x.Name, y.Name, x.Entity, x.Batch)})
			}
		}
	}
}

// callRounds maps the start tick of each call the scheduler played in a
// round of two or more (the calls that waited at their start gates
// together: the agent issued them without waiting for one another, as one
// model turn's parallel tool calls) to its round, from 1. A start tick is
// its call's own. nil where no scheduler ran, no round had two calls, or
// no op of the trace declares after=: only the after= check reads it.
type callRounds map[int]int

func roundsOf(sch *scheduler, ops []Operation) callRounds {
	if sch == nil || len(sch.rounds) == 0 || !slices.ContainsFunc(ops, func(o Operation) bool { return len(o.After) > 0 }) {
		return nil
	}
	rounds := callRounds{}
	for r, calls := range sch.rounds {
		for _, c := range calls {
			c.mu.Lock()
			t := int(c.rec.StartTick)
			c.mu.Unlock()
			if t > 0 {
				rounds[t] = r + 1
			}
		}
	}
	return rounds
}

// one reports whether a and b were played in one round.
func (r callRounds) one(a, b *Operation) bool {
	return a.StartTick != 0 && r[a.StartTick] != 0 && r[a.StartTick] == r[b.StartTick]
}

// afterPair reports b, a call of an op that declares after=a.Name, where
// it started before a returned and was beside it: in flight together (one
// batch), or played in one round with it (dispatched together, callRounds)
// and run to its end before a started, the worst order after= forbids
// (s0f0s1f1: that schedule had no finding while the check was "in flight
// together", red team rtV #14). A call that started after a returned
// (s1f1s0f0) is in order, and so is one whose worker waited for a's answer
// (on a channel) before it called the tool: it was never in a's round. A
// prerequisite done on b's entity, or one beside b whose answer names b's
// entity, clears a (prerequisiteDone).
func afterPair(ops []Operation, nest nesting, rounds callRounds, a, b *Operation, add func(Finding)) {
	if !contains(b.After, a.Name) || b.StartTick == 0 {
		return
	}
	end := a.EndTick
	if end == 0 {
		end = a.StartTick // it never reached its finish gate: in flight for an instant (batches)
	}
	if b.StartTick > end {
		return // a had returned
	}
	together := nest.together(a, b)
	if !together && (!rounds.one(a, b) || nest.related(a, b)) {
		return
	}
	// A call of a's op beside b (in flight with it, or in its round)
	// whose answer names b's entity is the one b waits for.
	beside := func(c, b *Operation) bool {
		return nest.together(c, b) || rounds.one(c, b) && !nest.related(c, b)
	}
	if prerequisiteDone(ops, a, b, beside) {
		return
	}
	where := fmt.Sprintf("batch %d: %s beside %s", a.Batch, callOn(b), callOn(a))
	if !together {
		where = fmt.Sprintf("one round of parallel calls: %s beside %s", callOn(b), callOn(a))
	}
	if b.EndTick != 0 && b.EndTick < a.StartTick {
		where += fmt.Sprintf(", which this schedule ran one after the other, %s first", b.Name)
	}
	add(Finding{Code: CodeDependentCallsConcurrent, Severity: SeverityError,
		Ops: []string{a.Name, b.Name}, Calls: []string{a.ID, b.ID},
		Message: fmt.Sprintf("%s dispatched concurrently with its prerequisite %s (%s): %s declares after=%s, so it must start only once %s has returned; issue them in separate turns or wait for %s first",
			b.Name, a.Name, where, b.Name, a.Name, a.Name, a.Name)})
}

// prerequisiteDone reports whether b, which declares after=a.Name, had
// its own prerequisite done before it started, so that a, in flight beside
// it, is not what it waits for: a call of that op other than a returned its
// answer before b started, on b's own entity (an attach_invoice(INV-9)
// dispatched beside a create_invoice(INV-7), INV-9 created and seen a turn
// before), or with an answer that names b's entity where the two ops name
// their entities differently (create_invoice(ORD-9), keyed by order,
// answered INV-ORD-9, and attach_invoice(INV-ORD-9), keyed by invoice,
// followed it). Nothing links b to a then; b waited for its own
// prerequisite, as the finding asks. A call whose answer names b's entity
// and that was beside b too (in flight with it; for afterOutOfOrder, in
// its round) is b's prerequisite: that pair is the finding, and a, another
// call of the op beside them whose answer does not name b's entity, is not
// reported with b as well. Where nothing links the two (a create keyed by
// customer that answers nothing of the invoice, an attach by invoice), the
// finding stands.
func prerequisiteDone(ops []Operation, a, b *Operation, beside func(c, b *Operation) bool) bool {
	if b.Entity == "" || a.Entity == b.Entity || b.StartTick == 0 {
		return false
	}
	want, linkable := entityText(b.Entity)
	aNames := linkable && answerNames(a, want)
	for i := range ops {
		c := &ops[i]
		if c == a || c.Name != a.Name {
			continue
		}
		answered := c.Status == StatusSuccess && c.Observation == ObservationReceived && c.EndTick != 0 && c.EndTick < b.StartTick
		if c.Entity == b.Entity && answered {
			return true
		}
		if linkable && !aNames && (answered || beside(c, b)) && answerNames(c, want) {
			return true
		}
	}
	return false
}

// entityText returns the text of an entity (its JSON) that a call's answer
// may name, and whether it is one: a string of two characters or more. A
// number or a one-letter name may turn up in any answer (a count, an
// amount) and link nothing.
func entityText(entity string) (string, bool) {
	var v any
	if json.Unmarshal([]byte(entity), &v) != nil {
		return "", false
	}
	s, ok := v.(string)
	return s, ok && len(s) >= 2
}

// answerNames reports whether the answer of c, a call that returned one,
// holds the string want: as itself, or as a value in the objects and
// arrays it is made of (create_invoice's {"id": "INV-ORD-9"}), as its JSON
// reads.
func answerNames(c *Operation, want string) bool {
	if c.Status != StatusSuccess {
		return false
	}
	return resultNames(c.Result, want)
}

// resultNames reports whether a call's answer holds the string want, as
// answerNames reads it.
func resultNames(result any, want string) bool {
	if result == nil {
		return false
	}
	if s, ok := result.(string); ok {
		return s == want
	}
	b, err := appendCanonical(nil, result)
	if err != nil || !bytes.Contains(b, []byte(want)) {
		return false
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	return holdsString(v, want, 0)
}

func holdsString(v any, want string, depth int) bool {
	if depth > 8 {
		return false
	}
	switch x := v.(type) {
	case string:
		return x == want
	case []any:
		for _, e := range x {
			if holdsString(e, want, depth+1) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if holdsString(e, want, depth+1) {
				return true
			}
		}
	}
	return false
}

// callOn names a call for a finding's message: its id, and the entity it
// is on where it has one (1:attach_invoice#1 on "INV-ORD-1").
func callOn(o *Operation) string {
	if o.Entity == "" {
		return o.ID
	}
	return o.ID + " on " + o.Entity
}

// updatesConflict reports whether two calls of one identity set one thing
// to other values, so that the one to land last decides what stays: the
// same field of an arguments object (a framework tool's) with other values
// (a ticket's priority set to high and to urgent, not its priority and
// its assignee, which commute), or, for plain arguments, exactly one of
// them other (setPriority("T-1", "high") and ("T-1", "urgent"); not
// update("T-1", "priority", "high") and ("T-1", "assignee", "alice"),
// whose field and value both differ: two fields, as far as the suite can
// tell).
func updatesConflict(a, b *Operation) bool {
	fa, fb := argFields(a), argFields(b)
	plain := 0
	for k, va := range fa {
		vb, ok := fb[k]
		if !ok || va == vb {
			continue
		}
		if strings.Contains(k, ".") {
			return true // a field both objects set, to other values
		}
		plain++
	}
	return plain == 1
}

// argFields maps each argument of o to its value in canonical JSON, and
// an argument that is an object (a framework tool's arguments) by its
// fields, as "name.field".
func argFields(o *Operation) map[string]string {
	out := map[string]string{}
	for i, v := range o.Args.Values {
		name := "arg" + strconv.Itoa(i)
		if i < len(o.Args.Names) {
			name = o.Args.Names[i]
		}
		if m, ok := v.(map[string]any); ok {
			for k, fv := range m {
				c, _ := Canonical(fv)
				out[name+"."+k] = c
			}
			continue
		}
		c, _ := Canonical(v)
		out[name] = c
	}
	return out
}

// partialBatchReplay reports calls of the failed batch that had succeeded
// and were executed again.
func (s *Suite) partialBatchReplay(res *Result, tr *Trace, add func(Finding)) {
	var failed *Operation
	for i := range tr.Ops {
		if tr.Ops[i].Fault == FaultConflict {
			failed = &tr.Ops[i]
		}
	}
	if failed == nil || failed.Batch == 0 {
		return
	}
	var replayed []string
	var calls []string
	again := map[string]bool{}
	// A later call is a succeeded call's again when it has its op,
	// identity and arguments. One with the failed call's is the retry the
	// finding asks for: where a succeeded call has those too (one update
	// issued twice in the batch), the first such later call is the
	// failed one's.
	failedArgs := argsKey(failed)
	for _, o := range tr.Ops {
		if o.Batch != failed.Batch || o.ID == failed.ID || !o.Effective() {
			continue
		}
		args := argsKey(&o)
		allowed := 0
		if o.Name == failed.Name && o.Identity == failed.Identity && args == failedArgs {
			allowed = 1
		}
		for _, later := range tr.Ops {
			if later.Seq > o.Seq && later.Batch != failed.Batch && later.Name == o.Name && later.Identity == o.Identity && later.Effective() && argsKey(&later) == args {
				if allowed > 0 {
					allowed--
					continue
				}
				k := o.Name + " " + o.Identity
				if !again[k] {
					again[k] = true
					replayed = append(replayed, fmt.Sprintf("%s %s", o.Name, o.Identity))
					calls = append(calls, o.ID, later.ID)
				}
			}
		}
	}
	if len(replayed) == 0 {
		return
	}
	// The duplicates are this finding; drop the generic ones for them.
	kept := res.Findings[:0]
	for _, f := range res.Findings {
		if f.Code == CodeDuplicateWrite && len(f.Identities) == 1 && again[f.Ops[0]+" "+f.Identities[0]] {
			continue
		}
		kept = append(kept, f)
	}
	res.Findings = kept
	res.Duplicates = res.Duplicates[:0]
	add(Finding{Code: CodePartialBatchReplay, Severity: SeverityError, Ops: []string{failed.Name}, Calls: calls,
		Message: fmt.Sprintf("after %s failed with a conflict, the agent executed again %d call(s) of the same batch that had already succeeded: %s; retry only the call that failed",
			failed.ID, len(replayed), strings.Join(replayed, "; "))})
}

// outcomeOf captures an outcome as canonical JSON, or the panic it raised.
func outcomeOf(fn func() any) (out string) {
	defer func() {
		if v := recover(); v != nil {
			out = fmt.Sprintf("outcome panicked: %v", v)
		}
	}()
	c, err := Canonical(fn())
	if err != nil {
		return "outcome cannot be canonicalized: " + errorText(err)
	}
	return c
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// restatedID reports whether writes a and b have identities that differ
// only in case or in spaces around their strings (a model that retyped
// the id), and State saw each change the world in a window of its own.
func restatedID(a, b *Operation) bool {
	if a.Identity == b.Identity || !a.stateSeen() || !b.stateSeen() || a.StateChange == "" || b.StateChange == "" {
		return false
	}
	return foldedID(a.Identity) == foldedID(b.Identity)
}

// foldedID returns identity id (canonical JSON) with each string in it
// lower-cased and trimmed of spaces.
func foldedID(id string) string {
	var v any
	if err := json.Unmarshal([]byte(id), &v); err != nil {
		return strings.ToLower(strings.TrimSpace(id))
	}
	var fold func(v any) any
	fold = func(v any) any {
		switch x := v.(type) {
		case string:
			return strings.ToLower(strings.TrimSpace(x))
		case []any:
			for i := range x {
				x[i] = fold(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = fold(x[k])
			}
		}
		return v
	}
	out, err := json.Marshal(fold(v))
	if err != nil {
		return id
	}
	return string(out)
}
