// Package testkit runs an agent under every fault and delivery scenario that
// production gives it, inside go test, and fails the test with what it finds.
// The test of the refund agent of examples/refund that refunds under an
// idempotency key:
//
//	func TestKeyedAgentRefundsOnce(t *testing.T) {
//		var bank *refund.Bank
//		testkit.TestAgent(t, func(ctx context.Context) error {
//			_, err := (&refund.KeyedAgent{Bank: bank}).Run(ctx, "payment-123")
//			return err
//		},
//			testkit.Setup(func(ctx context.Context) error { bank = refund.NewBank(100, "payment-123"); return nil }),
//			testkit.Invariant("at most one refund", func(*runtime.Trace) error {
//				if n := len(bank.Refunds()); n > 1 {
//					return fmt.Errorf("%d refunds", n)
//				}
//				return nil
//			}),
//		)
//	}
//
// It passes. With refund.NaiveAgent, which retries the refund after a
// timeout without asking the bank whether the first one went through, it
// fails: a lost acknowledgement makes it refund twice (duplicate_write,
// and the invariant fails), and so do two deliveries at once.
//
// TestAgent runs a baseline without faults, then, for every write call of the
// baseline, a lost acknowledgement (the write runs, the agent sees a
// timeout), a lost request (the write does not run, the agent sees the same
// timeout), a failure before the write and a crash right after it (the
// invocation is cancelled and delivered again; a write made in parallel
// with others runs first and alone, so the crash leaves the others unsent),
// and then the whole
// invocation delivered twice, one after the other and at once (in lockstep:
// each delivery's k-th call waits for the other's, so both read before
// either writes). Each scenario
// starts from a fresh world (Setup) and is a subtest:
//
//	go test -run 'TestRefund/lost_acknowledgement/refund#1'
//
// reruns exactly one; every finding prints that line. AGENTIDEM_SCENARIO
// (runtime.OnlyScenario) runs the baseline and one scenario too, named as
// the line names it (lost_acknowledgement/refund#1); a name that is none of
// the suite's scenarios fails the test, naming the closest ones, whatever
// -run selects. Under plain go test
// (no -v, no -run pattern below the test, no -failfast) a scenario that
// passes runs without its subtest, which would print nothing, and a failing
// one gets its subtest after the run, under the same name: go test -v lists
// every scenario, and a replay line's -run pattern runs only its own.
// Findings are
// duplicate_write, missing_write (with ExactlyOnce), invariant_failed,
// fault_not_triggered (a planned fault that never fired makes its scenario
// inconclusive, never silently safe), baseline_failed, agent_panic and
// identity_unstable. Whether the agent returned an error (execution outcome)
// is kept apart from the findings (safety outcome). Each problem is printed
// once: in full under the first scenario that shows it, and as one line in
// the summary, which names every scenario that shows it. Under plain go
// test a scenario that shows only problems printed under an earlier one
// gets no subtest (it would say nothing new), and the summary replays the
// second scenario of each problem; with -v each scenario has its subtest,
// where such a problem is a line that points back (with its own replay
// line). The summary is
// in the test's log, which go test prints when the test fails (by the suite
// or by anything after it) or with -v. It lists the baseline and every
// scenario with something to say (a finding, inconclusive, a fault that did
// not fire, a note, a schedule, an absorbed repeat) and counts the others
// by kind on one line; the report file and agentidem-gen report list all.
//
// # Effects, not executions
//
// A write executed twice is a duplicate only if the second execution had an
// effect. Three ways to tell the suite it had none, and when to use each:
//
//   - Declare it (//agentidem:write identity=id idempotent, or
//     toolspec.Idempotent, or an MCP tool's idempotentHint) when a repeat
//     with the same arguments changes nothing by the tool's nature: an
//     upsert, "set status to X", a create that skips what exists. Such a
//     repeat is absorbed; one with other arguments under the same identity
//     is an update of the first effect. The declaration is trusted unless
//     State is given.
//
//   - Give State when the world can be looked at: every write is judged by
//     the snapshots around it, a duplicate_write says what the repeat
//     changed, and a declared op whose equal repeat changed the world is
//     not_idempotent. For a tool whose effect lands later through a
//     background worker, add SettleOn with the worker's event stream, or
//     SettleUntil when the world can say it has nothing pending (exact on
//     a loaded machine, where a quiet time is a guess).
//
//   - Fix the sink (package idem) when a repeat really adds something: a
//     refund, a ticket, an appended line.
//
// State goes with the other options:
//
//	testkit.TestAgent(t, agent,
//		testkit.Setup(func(context.Context) error { desk = NewHelpdesk(); return nil }),
//		testkit.State(func() any { return desk.Snapshot() }),
//	)
//
// # Parallel tool calls
//
// When the agent's calls come from more than one goroutine (a model turn's
// tool calls dispatched in parallel), TestAgent also runs the agent under
// chosen schedules. Every traced call stops at two gates, start and finish;
// the scheduler waits until every goroutine of the agent is parked at a gate
// or blocked, then releases the waiting calls one gate at a time in the
// schedule's order (see "Real time and virtual time" below). The baseline
// itself runs under the listed schedule, so an agent with parallel calls
// gets the same baseline, and the same findings, on every run. Each schedule
// is a subtest named by its printable form:
//
//	go test -run 'TestInvoices/interleaving/s0s1f0f1'
//	AGENTIDEM_SCHEDULE='s1s0f1f0' go test -run TestInvoices
//
// The listed order (calls in canonical order, all started before any
// finishes) and its reverse come first; then every order of each round of up
// to four mutually dependent calls, within the Schedules budget (default
// 3000). Calls on different entities commute and are not reordered against
// each other; larger rounds are sampled by seeded PCT (Seed, Depth,
// AGENTIDEM_SEED). Which schedules the sample holds follows from the seed,
// so a schedule's replay line from a run seeded by AGENTIDEM_SEED sets it
// first:
//
//	AGENTIDEM_SEED=2 go test -run 'TestInvoices/interleaving/s2f2s4f4s0f0s1f1s3f3'
//
// Where the agent fails in the listed order itself, which the baseline
// runs, the ordering finding is the baseline's, and its replay line reruns
// the baseline, which fails in that order on every run; the reverse order,
// when it passes, is the baseline the faults are planned from. Calls in
// flight together on the scheduler's logical clock form a batch, and the
// checks are:
//
//   - dependent_calls_concurrent: a call of an op started before a call of
//     an op it declares after= returned, the two in one batch or in one
//     round of parallel calls (dispatched together: the schedule s0f0s1f1
//     that runs the dependent call to its end first is one); a call
//     started after its prerequisite returned, or one whose goroutine
//     waited for the prerequisite's answer before it called the tool, is
//     in order;
//   - concurrent_writes_same_entity: two writes to one entity in one batch;
//   - order_variant_outcome: with Outcome, schedules that end differently;
//   - partial_batch_replay: partial_batch_failure fails one call of a batch
//     with a conflict, and the agent executes again a call of the batch that
//     had succeeded.
//
// An ordering finding is in every schedule that shows it, one problem in
// the report: each such schedule fails, and so does its replay line.
//
// Commutation is decided by entity: a tool that declares an entity is
// assumed to touch nothing else, and one that declares none is ordered
// against everything. An agent whose logic depends on which answer arrives
// first (take the fastest quote) should leave the entity off those reads.
//
// A lock, a channel semaphore or a singleflight held across a tool call
// serializes calls behind the scheduler's back. The scheduler sees the
// waiting goroutine blocked and goes on; in duplicate_delivery/concurrent,
// a delivery waiting at its gate for another delivery that is blocked
// outside any gate goes on alone, and the scenario's trace notes say so.
//
// # Real time and virtual time
//
// Scenarios run on real time by default. Quiescence is read off the
// goroutines themselves: a stack snapshot of the process, of which the
// goroutines created since the scenario began are the scenario's; they are
// quiet when each is parked at a gate or blocked on a channel, a select, a
// lock or a condition, and none is running, asleep, in a system call or
// waiting for an HTTP answer or other network I/O. An idle keep-alive
// connection, a listening server and a library's reader loop (which runs
// none of the user's code: a gRPC transport's) count as quiet. A goroutine
// of the user's code reading a response body streamed after its headers
// (HTTP/1.1 or HTTP/2) or a reply on a raw connection counts as busy for
// 1 s at most (half the stall bound, if that is under 2 s): a loop of the
// agent's own that reads forever (a websocket's) costs that second once
// in the suite, not a stall, and a slower reply is not waited for to its
// end. This hosts what real agents use: net/http clients
// (http.DefaultClient, keep-alive transports), httptest servers started
// per test or per package, database/sql, channel semaphores, singleflight,
// sync.Cond, WaitGroup, errgroup, timers and context.WithTimeout.
//
// VirtualTime runs the interleavings of an agent with parallel calls in a
// testing/synctest bubble instead: time is virtual, so staggers and
// timeouts cost no wall time. A bubble cannot host network I/O, goroutines
// that outlive the run (keep-alive connections), or channels and locks
// shared with goroutines started before the scenario (a worker started once
// per test, a package-level semaphore): synctest ends the binary or hangs on
// those. The baseline runs on real time first; when it shows network I/O or
// a goroutine that outlived it, the suite stays on real time and the
// baseline's trace notes say why. Use VirtualTime only for agents that keep
// to themselves. Each Result's Clock says which clock its scenario ran on.
//
// A suite run inside a bubble of the test's own (TestAgent inside
// synctest.Test) runs on that bubble's clock, with VirtualTime or without;
// testing allows no subtests there, so each scenario's findings are
// written in the test, after the scenario's name.
//
// # Stalls
//
// A scenario that makes no progress (no tool call begun or finished, no
// gate reached or released, no delivery returned) for StallTimeout (default
// 10s, AGENTIDEM_STALL_TIMEOUT) fails alone with a stalled finding that
// names what is blocked and where ("delivery 2 (goroutine 41) is blocked on
// a channel send at agent.go:41, while createTicket of delivery 1 waits at
// its start gate"); its gates are opened and its invocations cancelled, and
// the suite goes on with the next scenario. An agent that never returns is
// bounded the same way. Inside a VirtualTime bubble a stall cannot be
// interrupted: a watchdog ends the binary with every goroutine's stack.
//
// # What the harness could not see
//
// A verdict is never "safe" by default. A baseline that traced no call is
// nothing_traced (the wrappers are not called, or the context passed to
// them is not the agent's). A tool given a context that does not come from
// the agent's (context.Background()) is attributed by the goroutine that
// called it and reported as context_detached (a warning naming the line
// of the agent's code the call came from: the call of a traced function,
// or, through an adapter, the call into the framework); a call no run can claim (two tests with t.Parallel and a goroutine
// that descends from neither) is an error finding in every active run. A
// goroutine the agent started and did not wait for (fire and forget: a
// notification, an audit write) that is still running when the agent
// returns is waited for, up to 100 ms, until it ends or blocks, so that
// the calls it makes at once are the scenario's on every run. A call from
// one made after its scenario ended (it waited or slept first) ran
// untraced: that scenario is inconclusive, and the test's log names the
// tools and call sites (goroutine_leak, a warning). Such a goroutine
// calling a tool without the agent's ctx while a later scenario runs (a
// worker the agent started once and reuses) fails that scenario
// (context_detached): no run can tell whose call it is. The workers of a
// pool that Setup or the test started, fed the agent's context over a
// channel, are not the agent's: they are no leak, and a crash_restart
// does not end them (their call after the crash returns an error matching
// context.Canceled instead, and the scenario's trace notes it). An
// identity JSON cannot encode is identity_unencodable; a framework tool
// whose identity argument a call left out, identity_missing. Results and
// errors JSON cannot encode are recorded as a string naming their type, so
// the report is always written. A panic in Setup, Teardown, an Invariant or
// Outcome fails its scenario; the binary survives.
//
// # Asynchronous side effects
//
// A tool that commits through a background worker says "accepted" and the
// effect shows later. Record the effects on a Stream (session, queue, kind)
// and assert on it with Eventually, ExactlyOne and Quiet: ExactlyOne fails at
// once on a second match and succeeds on one only when its window closes;
// FromSession and Since keep other sessions' and earlier turns' events out,
// OnQueue fails a match routed elsewhere; Quiet succeeds after quietFor with
// no new event. Inside a synctest bubble they run on virtual time and cost
// microseconds of wall time; outside one they poll in real time. The manual
// is on Source; examples/tickets has the ticket worker. The fault suite
// covers such a tool too: with State and SettleOn on the worker's stream,
// a resubmission that opened a second ticket is a duplicate_write and one
// the helpdesk recognised is absorbed (examples/tickets/worker_suite_test.go).
//
// # Golden traces
//
// Golden keeps the agent's fault-free calls in a file under testdata, the
// way Go projects keep golden files:
//
//	testkit.TestAgent(t, agent, setup, testkit.Golden("testdata/refund.trace.json"))
//
// AGENTIDEM_UPDATE=1 go test -run TestRefund records it (or -update, when
// the test package defines that flag: testkit defines no flag); every
// later run compares the baseline's calls with it, op, kind and identity in
// order within each invocation (timings, results and ids are ignored), and
// fails with a line diff when the agent's behaviour changed. An agent with
// parallel calls is compared in the order of the listed schedule, which is
// the same on every run.
//
// # Progress
//
// A suite that runs longer than a second shows one status line on the
// terminal of the person running go test, redrawn per scenario:
// "[7/19] TestRefund crash_restart/refund#1". go test pipes the test's own
// output, so the line goes to the controlling terminal (/dev/tty) and never
// into the test log; CI jobs have no terminal and get nothing, nor does
// go test -v (its lines already name each scenario) or TERM=dumb, and
// NO_COLOR drops its color.
//
// An inconclusive scenario (a fault that never fired, a goroutine that
// called a tool after its run) fails nothing by itself; FailInconclusive
// (or AGENTIDEM_FAIL_INCONCLUSIVE=1, or true) makes each fail the test, for a CI
// gate where ok must mean every scenario was judged.
//
// Run does the same without failing the test, for tests that prove a buggy
// agent is caught. Both return the *runtime.Report; AGENTIDEM_REPORT_DIR=dir
// (or the ReportDir option) writes it as dir/<package>/<Test>.json, where
// <package> is the package's directory within its module (none for the
// root package): two packages may name a test alike. A relative dir is
// taken from the root of the module (the directory of its go.mod), so
// `AGENTIDEM_REPORT_DIR=reports go test ./...` puts the reports of every
// package in one ./reports tree rather than in each package's folder, and
// `agentidem-gen report reports/` reads them all.
//
// While a suite runs, the garbage collector gets headroom: the heap may grow
// 16 MB past its live size before a collection, where the default pacing
// collects a small heap at 4 MB, which cost the ten-write suite a quarter
// of its time. The
// setting goes back after the first collection that follows the last
// running suite's report. GOGC set in the environment, a percent the program
// set, or AGENTIDEM_GC=default leaves the collector alone (docs/performance.md).
//
// # Environment variables
//
// AGENTIDEM_SCENARIO, AGENTIDEM_SCHEDULE, AGENTIDEM_SEED, AGENTIDEM_SHARD,
// AGENTIDEM_STALL_TIMEOUT, AGENTIDEM_FAIL_INCONCLUSIVE, AGENTIDEM_UPDATE,
// AGENTIDEM_REPORT_DIR and AGENTIDEM_GC set for every test what an option
// sets for one (the option, where given, wins; README, Environment
// variables). A value that does not parse (AGENTIDEM_STALL_TIMEOUT=1
// without its unit, AGENTIDEM_SEED=abc) fails the test before the agent
// runs, whatever -run selects, naming the variable, the value and what it
// takes: the suite never runs with a default in its place.
// AGENTIDEM_FAIL_INCONCLUSIVE and AGENTIDEM_UPDATE take 1, true or yes, and
// 0, false or no.
//
// testkit takes a small TB interface, so it can be driven by a fake in its
// own tests; *testing.T and *testing.B satisfy it.
package testkit
