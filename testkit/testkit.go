package testkit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/agentidem/agentidem-go/internal/bubble"
	"github.com/agentidem/agentidem-go/internal/hookcode"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// TB is what testkit needs of a test: *testing.T satisfies it. A TB that
// also has a Run(name string, f func(TB)) bool method gets one subtest per
// scenario; any other runs scenarios inline. A *testing.T gets the
// subtests of failing scenarios only, unless -v or a -run pattern can show
// or select the others (subtests.go).
type TB interface {
	Helper()
	Name() string
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

// Option configures TestAgent and Run.
type Option func(*settings)

type settings struct {
	rt        []runtime.Option
	reportDir string
	quiet     bool
	virtual   bool
	golden    string // Golden's file
	// failInconclusive: TestAgent fails on an inconclusive scenario too
	// (FailInconclusive, AGENTIDEM_FAIL_INCONCLUSIVE).
	failInconclusive bool
	// exited records a callback that ended its goroutine (callbackexit.go).
	exited *callbackExits
}

// Setup gives every scenario a fresh world; see runtime.Setup. Return an
// error rather than call t.Fatal in fn: a t.FailNow there (require.X(t,
// ...) too) stops the suite, and the test fails naming the line, with the
// summary and report written, the scenarios not run counted inconclusive
// (see State); t.Skip skips the test.
func Setup(fn func(ctx context.Context) error) Option {
	return func(s *settings) {
		run := fn
		if fn != nil {
			run = guardedHook(s.exits(), "Setup", fn)
		}
		With(hookcode.Setup(run, fn).(runtime.Option))(s) // runtime.Setup(run), whose code the stall watch reads is fn's
	}
}

// Teardown runs after every scenario; see runtime.Teardown.
func Teardown(fn func(ctx context.Context) error) Option {
	return func(s *settings) {
		if fn != nil {
			fn = guardedHook(s.exits(), "Teardown", fn)
		}
		With(runtime.Teardown(fn))(s)
	}
}

// Invariant adds a check run after the baseline and every scenario; see
// runtime.Invariant.
func Invariant(name string, fn func(*runtime.Trace) error) Option {
	return func(s *settings) {
		if fn != nil {
			fn = guardedInvariant(s.exits(), name, fn)
		}
		With(runtime.Invariant(name, fn))(s)
	}
}

// ExactlyOnce also reports writes the agent dropped while claiming success;
// see runtime.ExactlyOnce.
func ExactlyOnce() Option { return With(runtime.ExactlyOnce()) }

// ReportDir writes the JSON report to dir/<package>/<Test>.json, where
// <package> is the package's directory within its module (none for the
// module's root package). The environment variable AGENTIDEM_REPORT_DIR
// does the same for every test. A relative dir is taken from the module
// root, not the package's directory.
func ReportDir(dir string) Option { return func(s *settings) { s.reportDir = dir } }

// VirtualTime runs the interleaving scenarios of an agent with parallel
// calls inside a testing/synctest bubble: time is virtual (a stagger, a
// timeout or a polling loop costs no wall time) and quiescence is exact.
// A bubble can host only an agent whose goroutines, channels and timers
// are all its own: no network I/O (net/http, database drivers), no
// goroutine that outlives the run (keep-alive connections), no channel or
// lock shared with goroutines started before the scenario (a worker started
// once per test, a package-level semaphore). The baseline runs on real time
// first; when it shows network I/O or a goroutine that outlived it, the
// suite stays on real time and the report says why. What the baseline
// cannot show (a channel shared with an older goroutine) ends the test
// binary with synctest's own error, or stalls the bubble until the
// watchdog ends it: use VirtualTime only for agents that keep to themselves.
// A tool body asleep in the bubble (time.Sleep, even under a lock) holds
// the next call's start back while the bubble's clock runs, as on real
// time; see the README's hazards of a bubble.
// Without it every scenario runs on real time, and each Result's Clock
// says which one it ran on. Fault scenarios run on real time either way:
// an agent that makes its calls one at a time has no interleaving to run
// in a bubble, its retries' back-offs cost their wall time, and the
// report's notes say that VirtualTime ran nothing on virtual time.
func VirtualTime() Option { return func(s *settings) { s.virtual = true } }

// StallTimeout bounds how long a scenario may make no progress before it
// fails alone, naming what is blocked; see runtime.StallTimeout.
func StallTimeout(d time.Duration) Option { return With(runtime.StallTimeout(d)) }

// FailInconclusive makes TestAgent fail the test when a scenario is
// inconclusive, not only when one has a finding of severity error: an
// error line per inconclusive scenario names it, says why (its warnings,
// or the harness's own error) and gives its replay line. Without it an
// inconclusive scenario fails nothing: the summary's first line says
// INCONCLUSIVE and the report counts it, but go test prints ok. Use it
// where a green go test must mean every scenario was judged (a CI gate).
// AGENTIDEM_FAIL_INCONCLUSIVE=1 (or true, yes) does the same for every
// test; a value that is no such switch fails the test before its suite
// runs. Run never fails t, with it or without.
func FailInconclusive() Option { return func(s *settings) { s.failInconclusive = true } }

// NoSummary leaves the summary out of the test log.
func NoSummary() Option { return func(s *settings) { s.quiet = true } }

// Schedules sets the budget of schedules explored per test; see
// runtime.Schedules.
func Schedules(n int) Option { return With(runtime.Schedules(n)) }

// Depth sets the PCT depth used for large batches; see runtime.Depth.
func Depth(d int) Option { return With(runtime.Depth(d)) }

// Seed pins the PCT sampler; AGENTIDEM_SEED does the same, and a replay
// line of a schedule from a run it seeded sets it first.
func Seed(s int64) Option { return With(runtime.Seed(s)) }

// Replay runs exactly one schedule, as printed in a finding's replay line;
// AGENTIDEM_SCHEDULE does the same.
func Replay(schedule string) Option { return With(runtime.Replay(schedule)) }

// Outcome captures the agent's answer and the world's end state after each
// schedule; outcomes that differ between schedules are an
// order_variant_outcome finding. See runtime.Outcome.
func Outcome(fn func() any) Option { return With(runtime.Outcome(fn)) }

// FaultError makes each injected fault return, wrapped, the error fn gives
// for the op and the kind of fault (nil keeps the runtime's own): a
// *url.Error, a status error of the agent's HTTP client, whatever its
// retry condition looks for, so that the retry it makes in production runs
// here too. See runtime.FaultError, and the note a report gives when no
// injected fault was retried.
func FaultError(fn func(op string, kind runtime.FaultKind) error) Option {
	return With(runtime.FaultError(fn))
}

// With passes a runtime option through.
func With(o runtime.Option) Option { return func(s *settings) { s.rt = append(s.rt, o) } }

// TestAgent runs the fault suite of agent fn and fails t with every finding
// of severity error, each in the subtest of its scenario. It returns the
// report. A nil fn fails t at once (t.FailNow, where t has it; otherwise
// the report returned is not safe and its baseline did not run).
func TestAgent(t TB, fn func(ctx context.Context) error, opts ...Option) *runtime.Report {
	t.Helper()
	growStack()
	return suite(t, fn, true, opts)
}

// Run runs the fault suite like TestAgent but never fails t: findings are
// only logged. Use it to prove that a buggy agent is caught, by asserting on
// the returned report. A nil fn is the test's mistake, not a finding: it
// fails t as it does under TestAgent.
func Run(t TB, fn func(ctx context.Context) error, opts ...Option) *runtime.Report {
	t.Helper()
	growStack()
	return suite(t, fn, false, opts)
}

// growStack grows the stack of the test's goroutine to 32 KB at once,
// while the suite is not on it yet. A test's goroutine starts with the
// stack the Go runtime sees most goroutines use (a few KB), and a suite
// outgrew it two or three times deep down, each time copying every frame
// of the suite below it and reading their pc tables: the first judging of
// repeats (runtime's judgeRepeatsIn, whose frame is 9 KB, twelve frames
// down, in the baseline), a getcwd's buffer, a report's result. The
// suite's frames, its judging's deepest, take 20 to 24 KB.
// runtime.newstack on the test's goroutine took 0.20 s of a CPU profile
// of 8,000 ten-write suites under TestAgent (GOMAXPROCS=1, report file
// written over), 25 µs a suite, 2.8% of TestAgent's samples; 0.01 s from
// here, growStack's own copy, of the test's frames and TestAgent's alone
// (growing to 16 KB left the judging's growth to 32 KB: 0.10 s). A stack
// of 32 KB or more is left as it is; a suite that needs more grows it
// from there, as before.
//
//go:noinline
func growStack() byte {
	var b [24 << 10]byte // with the frames below it, past 16 KB: the stack grows to 32 KB
	return b[growStackAt]
}

// growStackAt is the byte growStack reads, a variable, so that the
// compiler keeps its array.
var growStackAt = 0

// nilAgent fails t for a nil agent func and returns a report that is not
// safe, whose baseline did not run. It panicked before: the one line that
// said what was wrong sat above a goroutine trace (red team rtO, item 6).
// Run fails t too: a nil fn is no finding to log, and a test that goes on
// with a report of nothing would assert on nothing.
func nilAgent(t TB, fail bool) *runtime.Report {
	if !plainLines(t) {
		t.Helper()
	}
	entry := "Run"
	if fail {
		entry = "TestAgent"
	}
	errorLine(t, "testkit: "+entry+" got a nil agent func: give it the function that runs the agent once, func(ctx context.Context) error")
	if f, ok := t.(interface{ FailNow() }); ok {
		f.FailNow()
	}
	rep := runtime.NewSuite(t.Name(), func(context.Context) error { return errors.New("nil agent func") }).Report()
	rep.BaselineFailure = "not run: nil agent func"
	return rep
}

func suite(t TB, fn func(ctx context.Context) error, fail bool, opts []Option) *runtime.Report {
	t.Helper()
	if fn == nil {
		return nilAgent(t, fail)
	}
	var st settings
	for _, o := range opts {
		if o != nil {
			o(&st)
		}
	}
	// Inside a testing/synctest bubble (a suite the test runs inside
	// synctest.Test), testing forbids subtests: each report that would
	// have one is written inline, its lines prefixed with its name
	// (inlineSubtest), and the suite runs on the bubble's clock, as
	// VirtualTime would have it: a bubble cannot hold another, so
	// VirtualTime asks for none (synctest.Test inside one panics).
	inBubble := bubble.In()
	if inBubble {
		st.virtual = false
		logLine(t, "testkit: inside a testing/synctest bubble, which allows no subtests: each scenario's findings are written here, after its name, and its replay line runs the whole suite; the suite runs on the bubble's clock")
	}
	pkg := callerPackage()
	testName := t.Name()
	names := suiteNames(t) // a second suite in one test is baseline#01, ... (names.go)
	replay := newReplayLines(pkg, testName)
	rtOpts := append([]runtime.Option{runtime.ReplayCommand(func(scenario string) string {
		return replay.line(names.scenario(scenario))
	})}, st.rt...)
	// With VirtualTime, schedules run in a testing/synctest bubble of the
	// subtest at hand, when t is a *testing.T and the baseline showed
	// nothing a bubble cannot host: quiescence is exact and time is
	// virtual. Otherwise they run on real time (see runtime's
	// goroutines.go).
	var cur *testing.T
	var s *runtime.Suite
	if _, ok := t.(*testing.T); ok && st.virtual {
		rtOpts = append(rtOpts, runtime.WithBubble(func(fn func(quiesce func())) {
			stop := watchdog(cur.Name(), watchdogBound(s.StallTimeout()))
			defer stop()
			synctest.Test(cur, func(*testing.T) { fn(synctest.Wait) })
		}))
	}
	setCur := func(t TB) {
		if tt, ok := t.(*testing.T); ok {
			cur = tt
		}
	}
	s = runtime.NewSuite(testName, fn, rtOpts...)
	// The report ends the suite's watch for late calls (runtime's
	// Enabled stays true until then): a t.Fatal in Setup, an Invariant or
	// a tool ends this goroutine before the report below, and the watch
	// must end all the same.
	reportTaken := false
	defer func() {
		if !reportTaken {
			s.Report()
		}
	}()
	// A callback that ended its goroutine (t.Fatal in a State that
	// captured the test's t) stops the suite (callbackexit.go); when it
	// ended this goroutine, finishing here still prints the summary and
	// writes the report.
	ex := st.exits()
	var finish func() *runtime.Report // set once the suite can report
	finished := false
	if err := readEnv(&st); err != nil {
		// As for runtime's own variables (runtime.ConfigError): the suite
		// does not run with a default in the value's place, and the test
		// fails, whatever -run selects.
		harness(t, fail, err)
		reportTaken = true
		return s.Report()
	}
	ctx := context.Background()
	printed := map[string]string{} // problems printed so far (findings.go)
	// reported counts, per result, the findings its subtest was given to
	// print. A subtest -run filtered out prints none, and that is the
	// user's choice; what a result gained after (Report's late calls, an
	// exploration's order_variant_outcome) no subtest printed.
	reported := map[*runtime.Result]int{}
	var prog *progress // the terminal's status line (progress.go)

	// Without eager subtests, scenarios run in this goroutine and only a
	// failing report gets its subtest, after the run (subtests.go).
	eager := !inBubble && eagerSubtests(t, st.virtual)

	// The report file opens while the suite runs (reportFile).
	var file *reportFile
	if dir := cmp.Or(st.reportDir, os.Getenv("AGENTIDEM_REPORT_DIR")); dir != "" {
		file = openReportFile(reportDir(dir), testName, true)
		defer file.abandon() // written by then, unless the suite ended early
	}

	// The baseline runs whatever -run selects: every scenario is planned
	// from it. Its subtest only reports.
	// Deferred after the report file's abandon, so that it runs first.
	defer func() {
		if !finished && finish != nil && ex.get() != nil && !ex.get().skipped() {
			finish()
		}
	}()
	setCur(t)
	ex.running(runtime.ScenarioBaseline)
	var planned []runtime.Scenario // what the suite plans, once the baseline ran
	finish = func() *runtime.Report {
		finished = true
		x := ex.get()
		ran := map[string]bool{}
		for _, res := range s.Report().Results {
			ran[res.Scenario] = true
		}
		n := 0
		for _, sc := range planned {
			if ran[sc.Name] {
				continue
			}
			why := fmt.Sprintf("the suite stopped before it: %s called %s at %s", x.callback, x.how, x.site)
			if sc.Name == x.scenario {
				why = fmt.Sprintf("cut short: %s called %s at %s while it ran, which ended a goroutine of the run", x.callback, x.how, x.site)
			}
			s.NotRun(sc, why)
			n++
		}
		rep := s.Report()
		reportTaken = true
		rep.Notes = append(rep.Notes, x.message(n))
		harness(t, fail, errors.New(x.message(n)))
		if !st.quiet {
			logLine(t, testSummary(rep, true, printed))
		}
		if file != nil {
			if err := file.write(rep); err != nil {
				t.Errorf("testkit: writing report: %v", err)
			}
		}
		return rep
	}
	// stopped reports whether a callback ended its goroutine: no further
	// scenario runs.
	stopped := func() bool { return ex.get() != nil }
	baseRes, baseErr := s.Baseline(ctx)
	if baseRes != nil {
		reported[baseRes] = len(baseRes.Findings)
	}
	// A setting the suite cannot run as asked (an AGENTIDEM_* variable
	// that does not parse, a scenario selection that names no scenario)
	// is the whole suite's problem, not the baseline's: it fails the test
	// itself, where no -run pattern leaves it out (a replay line's selects
	// one scenario's subtest, not the baseline's).
	var cfgErr *runtime.ConfigError
	if errors.As(baseErr, &cfgErr) {
		harness(t, fail, baseErr)
	}
	reportBase := func(st TB) {
		if !plainLines(st) {
			st.Helper()
		}
		if baseErr != nil && cfgErr == nil {
			harness(st, fail, baseErr)
		}
		reportResult(st, baseRes, fail, printed)
	}
	if eager {
		if !subtest(t, runtime.ScenarioBaseline, reportBase) && cfgErr == nil && !s.BaselineOK() {
			// -run left the baseline's subtest out (a replay line selects
			// one scenario's), and the baseline failed: no scenario runs,
			// and the test passed with nothing said, a replay line pasted
			// back after a regression reading ok (red team rtI). The
			// baseline's report fails the test itself.
			t.Helper()
			t.Logf("the baseline, whose subtest -run does not select, failed: no scenario ran")
			if record("", reportBase).failed {
				reportBase(t)
			} else {
				harness(t, fail, errors.New("the baseline failed: no scenario ran"))
			}
		}
	} else {
		record(noteSubtest(t, runtime.ScenarioBaseline), reportBase).flush(t)
	}
	// scenario runs one planned scenario and returns its report.
	scenario := func(sc runtime.Scenario) func(TB) {
		prog.step(sc.Name)
		defer prog.clear()
		ex.running(sc.Name)
		res, err := s.RunScenario(ctx, sc)
		if res != nil {
			reported[res] = len(res.Findings)
		}
		return func(st TB) {
			if !plainLines(st) {
				st.Helper()
			}
			if err != nil {
				harness(st, fail, err)
			}
			reportResult(st, res, fail, printed)
		}
	}
	// runPlan runs planned scenarios, one subtest each, grouped by their
	// first path element (lost_acknowledgement/refund#1) (eager), or one
	// for each failing one, after it ran.
	// notRun holds the planned scenarios go test ran no subtest for,
	// where nothing the user passed deselects them: with -failfast, once
	// a test has failed, t.Run returns at once, and the suite read SAFE
	// with no scenario (red team, /tmp/rt31 ff: a retrying agent without
	// a key, and its report file said safe).
	// deselected holds those a -run or -skip pattern left out (a replay
	// line's, a shard's): they did not run either, and the suite has no
	// verdict on them. Left out of the report, a replay line or
	// -run 'TestX/lost_request' read SAFE, its report file "safe": true,
	// with nothing of the scenarios that fail (red team rtV #2). Counted
	// not run, they make the suite INCONCLUSIVE; the user chose them, so
	// they fail nothing, FailInconclusive included (deselectedNote).
	var notRun, deselected []runtime.Scenario
	skipped := func(ran bool, scs ...runtime.Scenario) {
		switch {
		case ran:
		case selectsSubtests():
			deselected = append(deselected, scs...)
		case failFast():
			notRun = append(notRun, scs...)
		}
	}
	runPlan := func(plan []runtime.Scenario) {
		for _, gr := range group(plan) {
			g, scs := gr.name, gr.scs
			if stopped() {
				return
			}
			if eager {
				ran := subtest(t, g, func(gt TB) {
					for _, sc := range scs {
						if stopped() {
							return
						}
						skipped(subtest(gt, strings.TrimPrefix(sc.Name, g+"/"), func(st TB) {
							st.Helper()
							setCur(st)
							scenario(sc)(st)
						}), sc)
					}
				})
				skipped(ran, scs...)
				continue
			}
			// A failing scenario's subtest is made under t, named with
			// its group's path (crash_restart/refund#1): go test
			// matches it as it would the scenario under a group
			// subtest, and prints it alike, with no group subtest to
			// make and to copy its output through.
			name := noteSubtest(t, g) // before the runs: replay lines name it
			for _, sc := range scs {
				if stopped() {
					return
				}
				d := record("", scenario(sc))
				if d.failed { // named only for its subtest: most pass
					d.name = name + "/" + strings.TrimPrefix(sc.Name, g+"/")
				}
				d.flush(t)
			}
		}
	}
	parallel := s.Parallel(ctx) // runs the listed schedule once, when the baseline passed
	// Plan makes the plan anew at each call (42 scenarios and their names
	// for the ten-write agent): once here, for the progress line and the
	// runs.
	plan := s.Plan()
	planned = append(append([]runtime.Scenario{}, plan...), s.PartialBatchPlan()...)
	if n := 1 + len(planned); n > 8 {
		// Room for every scenario's result at once: grown a result at a
		// time, the map of the ten-write suite's 43 was rehashed on the
		// way, its inserts 0.07 s of a CPU profile of 8,000 suites under
		// TestAgent (GOMAXPROCS=1), 0.04 s made with room (4 µs a suite
		// less). An exploration's schedules grow it as before.
		r := make(map[*runtime.Result]int, n)
		for res, k := range reported {
			r[res] = k
		}
		reported = r
	}
	prog = startProgress(testName, 1+len(plan)+s.PlannedSchedules()+len(s.PartialBatchPlan()))
	defer prog.done()
	if st.golden != "" {
		checkGolden(t, s, st.golden, pkg, fail)
	}
	runPlan(plan)
	// The interleavings: a subtest per schedule, and the exploration's
	// problems and figures under interleaving.
	schedule := func(res *runtime.Result) func(TB) {
		reported[res] = len(res.Findings)
		return func(st TB) {
			st.Helper()
			reportResult(st, res, fail, printed)
		}
	}
	explored := func(it TB, ex *runtime.Exploration, err error) {
		it.Helper()
		if err != nil {
			harness(it, fail, err)
		}
		if ex != nil && ex.Explored > 0 {
			logLine(it, ex.String())
		}
	}
	if stopped() {
		parallel = false
	}
	if parallel && eager {
		ran := subtest(t, runtime.ScenarioInterleaving, func(it TB) {
			it.Helper()
			setCur(it)
			ex, err := s.Interleavings(ctx, func(res *runtime.Result) {
				prog.clear()
				subtest(it, res.Schedule, schedule(res))
				prog.step(res.Scenario) // shown while the next schedule runs
			})
			explored(it, ex, err)
		})
		skipped(ran, runtime.Scenario{Name: runtime.ScenarioInterleaving, Kind: runtime.ScenarioInterleaving, OperationIndex: -1})
	} else if parallel {
		name := noteSubtest(t, runtime.ScenarioInterleaving)
		var results []*runtime.Result
		ex, err := s.Interleavings(ctx, func(res *runtime.Result) {
			prog.clear()
			results = append(results, res)
			prog.step(res.Scenario)
		})
		record(name, func(it TB) {
			it.Helper()
			for _, res := range results {
				runSubtest(it, res.Schedule, schedule(res))
			}
			explored(it, ex, err)
		}).flush(t)
	}
	runPlan(s.PartialBatchPlan())
	if x := ex.get(); x != nil && !x.skipped() {
		return finish()
	}
	if len(deselected) > 0 {
		total := len(planned)
		if parallel {
			total++ // the interleavings, one subtest
		}
		for _, sc := range deselected {
			s.NotRun(sc, deselectedNote)
		}
		logLine(t, "testkit: "+deselectedSummary(len(deselected), total, testName))
	}
	if len(notRun) > 0 {
		const why = "go test ran no subtest for it: -failfast stops running subtests once a test has failed"
		names := make([]string, len(notRun))
		for i, sc := range notRun {
			s.NotRun(sc, why)
			names[i] = sc.Name
		}
		harness(t, fail, fmt.Errorf("go test ran no subtest for %d of the suite's scenarios (%s): -failfast stops running subtests once a test has failed; they did not run, so the suite has no verdict on them, and its report counts them inconclusive", len(names), strings.Join(names, ", ")))
	}
	rep := s.Report()
	reportTaken = true
	if len(deselected) > 0 {
		total := len(planned)
		if parallel {
			total++
		}
		rep.Notes = append(rep.Notes, deselectedSummary(len(deselected), total, testName))
	}
	// Report adds what no scenario could show when it ran: the calls a
	// goroutine the agent left running made after its scenario ended
	// (runtime/late.go); the exploration adds order_variant_outcome to a
	// schedule already reported. Those are printed here, in full, once
	// per problem. The findings a subtest was given are its own, printed
	// there or filtered out by -run: a replay line's -run selects one
	// scenario, and another's finding must not fail it here.
	for _, res := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		if res == nil {
			continue
		}
		for _, f := range res.Findings[min(reported[res], len(res.Findings)):] {
			if _, ok := printed[f.GroupKey()]; ok {
				continue
			}
			printed[f.GroupKey()] = f.Scenario
			line := fmt.Sprintf("%s: [%s] %s\n    replay: %s", f.Scenario, f.Code, f.Message, f.Replay)
			if fail && f.Severity == runtime.SeverityError {
				errorLine(t, line)
			} else {
				logLine(t, string(f.Severity)+": "+line)
			}
		}
	}
	if failed := stateFailures(rep); len(failed) > 0 { // statefailed.go
		err := stateFailedError(failed)
		rep.Notes = append(rep.Notes, err.Error())
		harness(t, fail, err)
	}
	if fail && st.failInconclusive { // the option, or AGENTIDEM_FAIL_INCONCLUSIVE (readEnv)
		failInconclusive(t, rep)
	}
	switch {
	case st.quiet:
	case inBubble && verbose(): // as eager subtests would have it under -v
		logLine(t, testSummary(rep, true, printed))
	default:
		logSummary(t, rep, eager, printed)
	}
	if file != nil {
		if err := file.write(rep); err != nil {
			t.Errorf("testkit: writing report: %v", err)
		}
	}
	return rep
}

// scenarioGroup is the planned scenarios of one first path element.
type scenarioGroup struct {
	name string
	scs  []runtime.Scenario
}

// group orders scenarios by their first path element, keeping plan order.
// The groups are counted first, then filled in one slice: a map of slices
// grown a scenario at a time, each name split from its path, cost the
// ten-write agent's plan of 42 scenarios, which interleaves its groups,
// 68 allocations and 9 to 17 µs, against 5 and 5 µs now. A plan has a
// group per kind of fault, a few, looked up in order.
func group(plan []runtime.Scenario) []scenarioGroup {
	var groups []scenarioGroup
	find := func(name string) int {
		return slices.IndexFunc(groups, func(g scenarioGroup) bool { return g.name == name })
	}
	counts := make([]int, 0, 8)
	for _, sc := range plan {
		name := firstElem(sc.Name)
		if k := find(name); k >= 0 {
			counts[k]++
			continue
		}
		groups = append(groups, scenarioGroup{name: name})
		counts = append(counts, 1)
	}
	all := make([]runtime.Scenario, len(plan))
	for k := range groups {
		groups[k].scs, all = all[:0:counts[k]], all[counts[k]:]
	}
	for _, sc := range plan {
		k := find(firstElem(sc.Name))
		groups[k].scs = append(groups[k].scs, sc)
	}
	return groups
}

// firstElem is the first element of a scenario's path, as Path()[0].
func firstElem(name string) string {
	g, _, _ := strings.Cut(name, "/")
	return g
}

// harness reports a problem of the run itself (a failing Setup, a stalled
// schedule): an error under TestAgent, a log line under Run, whose report
// carries it.
func harness(t TB, fail bool, err error) {
	if !plainLines(t) {
		t.Helper()
	}
	if fail {
		errorLine(t, "testkit: "+err.Error())
	} else {
		logLine(t, "testkit: "+err.Error())
	}
}

// subtest runs f as a subtest of t when t supports subtests, and reports
// whether f ran (go test runs none that -run deselects, nor any once a test
// failed under -failfast).
func subtest(t TB, name string, f func(TB)) (ran bool) {
	runSubtest(t, noteSubtest(t, name), func(st TB) {
		ran = true
		f(st)
	})
	return ran
}

// runSubtest runs f as the subtest name of t, a name noteSubtest already
// returned, when t supports subtests, and inline otherwise.
func runSubtest(t TB, name string, f func(TB)) {
	switch tt := t.(type) {
	case *testing.T:
		if bubble.In() { // testing forbids subtests in a synctest bubble
			f(&inlineSubtest{t: tt, name: name})
			return
		}
		tt.Run(name, func(st *testing.T) { f(st) })
	case interface{ Run(string, func(TB)) bool }:
		tt.Run(name, f)
	default:
		if r, ok := t.(*recorder); ok {
			r.subtests++
		}
		f(t)
	}
}

// replayLine is the go test command that reruns one scenario.
func replayLine(pkg, test, scenario string) string {
	return newReplayLines(pkg, test).line(scenario)
}

// replayLines writes the replay lines of one test's scenarios: the part
// of the pattern that names the test is written once.
type replayLines struct{ head, tail string }

func newReplayLines(pkg, test string) replayLines {
	var b strings.Builder
	b.WriteString("go test -run '")
	for _, p := range strings.Split(test, "/") {
		b.WriteString("^" + regexp.QuoteMeta(p) + "$/")
	}
	tail := "'"
	if pkg != "" {
		tail += " " + pkg
	}
	return replayLines{head: b.String(), tail: tail}
}

// line is called for every scenario of a suite (its result's replay line)
// and writes the line in one allocation: split, and each element quoted
// into a string of its own, a scenario of two elements took two, and the
// name of its first element (testNames.scenario) one more.
func (r replayLines) line(scenario string) string {
	var b strings.Builder
	b.Grow(len(r.head) + len(scenario) + 2*strings.Count(scenario, "/") + 2 + len(r.tail))
	b.WriteString(r.head)
	for {
		p, rest, more := strings.Cut(scenario, "/")
		b.WriteByte('^')
		b.WriteString(regexp.QuoteMeta(p)) // p itself when nothing is to quote
		b.WriteByte('$')
		if !more {
			break
		}
		b.WriteByte('/')
		scenario = rest
	}
	b.WriteString(r.tail)
	return b.String()
}

// callerPackage finds the import path of the test that called testkit.
// The frames are read once per chain of return addresses above the suite
// (callerPackages): the same addresses stand for the same functions, and
// reading their names took two thirds of the call.
func callerPackage() string {
	var pcs [16]uintptr
	n := goruntime.Callers(3, pcs[:])
	callerPackages.Lock()
	defer callerPackages.Unlock()
	if p, ok := callerPackages.m[pcs]; ok {
		return p
	}
	if callerPackages.m == nil {
		callerPackages.m = map[[16]uintptr]string{}
	}
	p := packageOfFrames(pcs[:n])
	callerPackages.m[pcs] = p
	return p
}

// callerPackages holds callerPackage's answers by the return addresses it
// read: a test binary calls testkit from a few places, each many times.
var callerPackages struct {
	sync.Mutex
	m map[[16]uintptr]string
}

// packageOfFrames is the import path of the first function of pcs outside
// testkit, less a _test suffix, or "".
func packageOfFrames(pcs []uintptr) string {
	frames := goruntime.CallersFrames(pcs)
	for {
		fr, more := frames.Next()
		name := fr.Function
		if name != "" && !strings.Contains(name, "agentidem-go/testkit.") {
			slash := strings.LastIndex(name, "/")
			dot := strings.Index(name[slash+1:], ".")
			if dot >= 0 {
				return strings.TrimSuffix(name[:slash+1+dot], "_test")
			}
		}
		if !more {
			return ""
		}
	}
}

// writeReport writes the report of test to its file in dir, opened then
// and there (reportFile).
func writeReport(dir, test string, rep *runtime.Report) error {
	return openReportFile(dir, test, false).write(rep)
}

// reportFile is a test's report file, opened while its suite runs. Making a
// file is the costliest part of writing a report where there was none (a
// first go test, a clean checkout in CI): 0.2 to 0.6 ms on this project's
// machine against 4 µs to open one a run before left (and writing the
// ten-write suite's report took 0.08 to 0.85 ms into a new file, 0.03 ms
// over an old one). So the suite opens a file an earlier run left then and
// there, as it starts, and makes a new one in a goroutine aside
// (runtime.HarnessAside), and writes it at its end. (Opening an old file
// aside too cost the ten-write suite 4% under TestAgent: a goroutine of its
// own for 4 µs of work, which wakes the idle processor on a machine of
// two; 5 runs of 600 suites alternating both ways, written over old files.)
//
// A file left by an earlier run is written over in place and then cut to
// the new length, not truncated first: truncating gives the file's blocks
// back to the file system only for the write to take them again, which
// costs more than the rest of the write together (BenchmarkRewriteReport).
// It is cut only when it was longer than the new report: a run again
// writes a report within some tens of bytes of the last one's length,
// longer about as often as shorter, and cutting a file to its own length
// or more is a system call that changes nothing in it (7 to 8 µs of the
// ten-write suite under TestAgent, timed inside it, against about 1 µs
// to ask the file's length, an lseek, before writing).
// The directory is made when the file cannot be opened for want of it, not
// looked up before each report. A suite that ends before its report (a
// t.Fatal in Setup) leaves an earlier run's file as it was, and removes
// the one it made.
type reportFile struct {
	dir, path string
	test      string        // the test whose report it is
	opened    chan struct{} // closed once f, made and err are set
	f         *reportFD
	made      bool // the file was made for this report
	err       error
}

// openReportFile starts opening the report file of test in dir: before it
// returns, or, with aside, only when it opens a file an earlier run left,
// and else in a goroutine of its own that makes it.
func openReportFile(dir, test string, aside bool) *reportFile {
	r := &reportFile{dir: dir, path: filepath.Join(dir, reportFileName(dir, test)), test: test, opened: make(chan struct{})}
	if aside {
		if f, err := openOldReport(r.path); err == nil {
			r.f = f
			close(r.opened)
			return r
		}
		runtime.HarnessAside(r.open)
	} else {
		r.open()
	}
	return r
}

func (r *reportFile) open() {
	defer close(r.opened)
	r.f, r.made, r.err = openReport(r.path)
	if errors.Is(r.err, fs.ErrNotExist) {
		if r.err = os.MkdirAll(r.dir, 0o755); r.err != nil {
			return
		}
		r.f, r.made, r.err = openReport(r.path)
	}
}

// write writes rep to the file and closes it.
func (r *reportFile) write(rep *runtime.Report) error {
	<-r.opened
	if r.err != nil {
		return r.err
	}
	f := r.f
	r.f = nil
	// The earlier run's length, and the file's offset at its end: the
	// report is written from offset 0 (WriteAt), whatever the offset.
	old, serr := f.Seek(0, io.SeekEnd)
	w := &offsetWriter{f: f}
	err := rep.WriteJSON(w)
	if err != nil {
		// Nothing of the earlier run's report may pass for this one's.
		f.Truncate(0)
	} else if serr != nil || old > w.n {
		err = f.Truncate(w.n)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		removeStaleNumbered(r.dir, r.path, r.test)
	}
	return err
}

// abandon closes the file unwritten, once it is open, and removes it if it
// was made for this report.
func (r *reportFile) abandon() {
	<-r.opened
	if r.f == nil {
		return
	}
	r.f.Close()
	r.f = nil
	if r.made {
		os.Remove(r.path)
	}
}

// offsetWriter writes to f from offset 0 on, one write after the other,
// and counts the bytes written.
type offsetWriter struct {
	f *reportFD
	n int64
}

func (w *offsetWriter) Write(p []byte) (int, error) {
	n, err := w.f.WriteAt(p, w.n)
	w.n += int64(n)
	return n, err
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// watchdogBound bounds one scheduled run in a bubble in real time, for a
// suite whose scenarios stall after stall (runtime.StallTimeout): three
// times that, and at least 30 s. Runs take milliseconds; one that takes
// this long is stuck where the scheduler cannot see (see watchdog). It was
// two minutes whatever the stall bound (a red team's agent holding a lock
// across a sleep in its tool hung its test for two minutes with a stall
// bound of 5 s).
func watchdogBound(stall time.Duration) time.Duration {
	return max(3*stall, 30*time.Second)
}

// watchdog guards one bubble from outside it. A goroutine blocked on a
// sync.Mutex (or on I/O) is not durably blocked, so synctest.Wait never
// returns and nothing outside the bubble may wake it. The real-time
// pre-flight catches that hazard for the listed schedule; if another
// schedule hits it, the watchdog ends the test binary with a message that
// names the hazard and every goroutine's stack, instead of a silent hang
// until go test's -timeout.
func watchdog(test string, after time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(after):
			debug.SetTraceback("all")
			panic(fmt.Sprintf("agentidem: %s: a scheduled run made no progress for %s: a goroutine of the agent is blocked where the scheduler cannot see it (a sync.Mutex held across a tool call or across a long select on a timer in a tool, or I/O outside the test's bubble), while other calls are held at their gates. Release locks before calling tools. The stacks below show the goroutine blocked in sync.(*Mutex).Lock or in I/O.", test, after))
		}
	}()
	return func() { close(done) }
}

// failInconclusive fails t once per inconclusive scenario of rep
// (FailInconclusive): the scenario, why, and its replay line.
func failInconclusive(t TB, rep *runtime.Report) {
	t.Helper()
	for _, res := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		if res == nil || !res.Inconclusive || res.Trace != nil && slices.Contains(res.Trace.Notes, "not run: "+deselectedNote) {
			continue // -run left it out: the user's choice
		}
		var why []string
		for _, f := range res.Findings {
			if f.Severity != runtime.SeverityError {
				msg, _, _ := strings.Cut(f.Message, "; ")
				why = append(why, "["+f.Code+"] "+msg)
			}
		}
		if len(why) == 0 && res.Error != "" {
			why = append(why, res.Error)
		}
		if len(why) == 0 && res.Trace != nil && len(res.Trace.Notes) > 0 {
			// The scenario's first note says why (a repeat not judged,
			// and what failed), clipped: the report has it whole.
			n := res.Trace.Notes[0]
			if r := []rune(n); len(r) > 300 {
				n = string(r[:300]) + "…"
			}
			why = append(why, n)
		}
		if len(why) == 0 {
			why = append(why, "the harness could not judge it (see the report)")
		}
		line := fmt.Sprintf("%s: inconclusive (FailInconclusive): %s", res.Scenario, strings.Join(why, "; "))
		if res.Replay != "" {
			line += "\n    replay: " + res.Replay
		}
		errorLine(t, line)
	}
}

// inlineSubtest stands for the subtest name of t where testing allows none
// (in a synctest bubble): what it writes goes to t's output, each write
// after the subtest's name (errorLine and logLine write a line a call).
type inlineSubtest struct {
	t    *testing.T
	name string
}

func (s *inlineSubtest) Helper()      {}
func (s *inlineSubtest) Name() string { return s.t.Name() + "/" + s.name }
func (s *inlineSubtest) Fail()        { s.t.Fail() }
func (s *inlineSubtest) Output() io.Writer {
	return prefixWriter{w: s.t.Output(), prefix: s.name + ": "}
}
func (s *inlineSubtest) Errorf(format string, args ...any) {
	s.Fail()
	writeLine(s.Output(), fmt.Sprintf(format, args...))
}
func (s *inlineSubtest) Logf(format string, args ...any) {
	writeLine(s.Output(), fmt.Sprintf(format, args...))
}

// prefixWriter writes prefix before each write to w.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}
