package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSpareCallsAreHandedOutOnce(t *testing.T) {
	r1 := newRecorder("spare", Fault{}, nil)
	first := r1.newCall() // makes a block of 2: one is left
	sp := r1.takeSpare()
	if len(sp.block) != 1 {
		t.Fatalf("takeSpare = %+v, want the one Call left of a block of 2", sp)
	}
	r2 := newRecorder("spare", Fault{}, nil)
	r2.useSpare(sp)
	got := r2.newCall()
	if got != &sp.block[0] {
		t.Errorf("the next recorder made a block instead of using the spare Call")
	}
	// The first recorder still records (a goroutine its agent left behind):
	// it must not hand out the Call it gave away.
	late := r1.newCall()
	if late == got || late == first {
		t.Errorf("a Call was handed out twice")
	}
	if len(r2.takeSpare().block) != 0 {
		t.Errorf("a recorder that used its whole spare block has nothing to hand on")
	}
}

// A run counts the calls of each op name, past the sixteen names it finds
// by a scan as below them; two ops of one name share the count.
func TestOccurrencesOfManyOps(t *testing.T) {
	r := newRecorder("many", Fault{Kind: FaultLostAck, Op: "op17", Occurrence: 2}, nil)
	var seq int32
	for round := int32(1); round <= 2; round++ {
		for i := range 20 {
			op := &Op{Name: fmt.Sprintf("op%d", i)}
			k, s, planned := r.nextNumber(op)
			if k != round || s != seq {
				t.Errorf("round %d, %s: occurrence %d, seq %d; want %d, %d", round, op.Name, k, s, round, seq)
			}
			if want := op.Name == "op17" && round == 2; planned != want {
				t.Errorf("round %d, %s: planned %v, want %v", round, op.Name, planned, want)
			}
			seq++
		}
	}
	if k, _, _ := r.nextNumber(&Op{Name: "op3"}); k != 3 {
		t.Errorf("another Op named op3 got occurrence %d, want 3", k)
	}
}

// leftBehindPut is a write traced by hand, for TestWriterLeftBehindWithState.
var leftBehindPut = &Op{Kind: KindWrite, Name: "put", Params: []string{"k"}, Pos: "recorder_test.go:1"}

// tracedPut calls put through leftBehindPut, as a generated wrapper would.
// putsAgent is an agent that puts keys in turn, each a traced call.
func putsAgent(put func(string), keys ...string) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, k := range keys {
			if err := tracedPut(ctx, put, k); err != nil {
				return err
			}
		}
		return nil
	}
}

func tracedPut(ctx context.Context, put func(string), k string) error {
	args := []any{k}
	c, ctx := Begin(ctx, leftBehindPut, args, args[0:1:1], nil)
	if err := c.Start(); err != nil {
		return err
	}
	put(k)
	return c.Finish(nil)
}

// An agent with State that leaves behind a goroutine writing with its
// context: the goroutine's calls open and close the judge's clusters, and
// add to the baseline's record of calling goroutines, while the trace is
// read and judged. Under -race this fails if the harness reads any of them
// without its lock; always, if the goroutine's writes disturb the judgement
// of the run's own (a set: its repeats change nothing, and State sees it).
func TestWriterLeftBehindWithState(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	var (
		leftMu sync.Mutex
		left   chan struct{} // stops the goroutine the last run left
	)
	for range 3 {
		var mu sync.Mutex
		set := map[string]bool{}
		put := func(k string) {
			if k == "late" {
				return // what the goroutine left behind writes, State does not see
			}
			mu.Lock()
			set[k] = true
			mu.Unlock()
		}
		agent := func(ctx context.Context) error {
			for range 3 {
				if err := tracedPut(ctx, put, "a"); err != nil {
					return err
				}
			}
			// One goroutine writes at a time: each run's stops the one
			// the run before left. Left to write every 20 µs until the
			// test's end, the goroutines of all 40 runs took the CPUs
			// from the harness, and the test took 8 minutes under -race
			// on a machine loaded by other work (CI184).
			mine := make(chan struct{})
			leftMu.Lock()
			if left != nil {
				close(left)
			}
			left = mine
			leftMu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					case <-mine:
						return
					default:
					}
					tracedPut(ctx, put, "late")
					time.Sleep(20 * time.Microsecond)
				}
			}()
			return nil
		}
		state := func() any {
			mu.Lock()
			defer mu.Unlock()
			return slices.Sorted(maps.Keys(set))
		}
		s := NewSuite("left-behind", agent, State(state), Setup(func(context.Context) error {
			mu.Lock()
			clear(set)
			mu.Unlock()
			return nil
		}))
		endSuite(t, s)
		base, err := s.Baseline(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range base.Findings {
			if f.Code == CodeDuplicateWrite && slices.Contains(f.Identities, `"a"`) {
				t.Errorf("the baseline's repeats of put(a) changed nothing, yet: %s", f.Message)
			}
		}
		for _, sc := range s.Plan() {
			if _, err := s.RunScenario(context.Background(), sc); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// leavingAgent is an agent whose invocation number leave starts a goroutine
// that waits, and whose invocation number call wakes it and waits for it to
// call put with a context that carries no run; every invocation then puts
// "a" with its own context.
func leavingAgent(leave, call int) func(context.Context) error {
	put := func(string) {}
	wake, made := make(chan struct{}), make(chan struct{})
	var invocations int
	return func(ctx context.Context) error {
		invocations++
		switch invocations {
		case leave:
			go func() {
				<-wake
				tracedPut(context.Background(), put, "late")
				close(made)
			}()
		case call:
			close(wake)
			<-made
		}
		return tracedPut(ctx, put, "a")
	}
}

// A goroutine the baseline's invocation left running calls a tool with a
// context that carries no run while a later scenario runs: it is no call
// of that scenario (taking it for one would count a write the scenario did
// not make), nor can the harness tell it is not (a worker the agent reuses
// would make it on the scenario's behalf). It is refused there, as an
// error naming the scenario that started the goroutine.
func TestCallOfAGoroutineLeftBehindByAnEndedRun(t *testing.T) {
	// The baseline leaves the goroutine; the first scenario wakes it.
	agent := leavingAgent(1, 2)
	s := NewSuite("left-behind", agent)
	if _, err := s.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	sc := s.Plan()[0]
	res, err := s.RunScenario(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Trace.Ops {
		if o.Identity == `"late"` {
			t.Errorf("%s: the left-behind goroutine's call was taken for the scenario's: %s", sc.Name, o.ID)
		}
	}
	if len(res.Trace.Refused) != 1 || !strings.Contains(res.Trace.Refused[0], "started by an invocation of scenario baseline of left-behind, whose run has ended,") {
		t.Errorf("%s: refused %q, want the left-behind call said", sc.Name, res.Trace.Refused)
	}
	if res.Safe {
		t.Errorf("%s is safe with a call it could not attribute", sc.Name)
	}
	if rep := s.Report(); rep.Has(CodeGoroutineLeak) {
		t.Errorf("the refused call is also counted late: %v", rep.Findings)
	}
}

// assertLate checks that res, and only res, carries the goroutine_leak
// warning of n late calls of put, and is inconclusive.
func assertLate(t *testing.T, rep *Report, res *Result, n int) {
	t.Helper()
	var late []Finding
	for _, f := range rep.Findings {
		if f.Code == CodeGoroutineLeak {
			late = append(late, f)
		}
	}
	if len(late) != 1 {
		t.Fatalf("goroutine_leak findings %+v, want one", late)
	}
	f := late[0]
	calls := "a tool call (put, at recorder_test.go:"
	if n > 1 {
		calls = fmt.Sprintf("%d tool calls (put, at recorder_test.go:", n)
	}
	if f.Scenario != res.Scenario || f.Severity != SeverityWarning || !slices.Equal(f.Ops, []string{"put"}) ||
		!strings.HasPrefix(f.Message, calls) || !strings.Contains(f.Message, "after the scenario's run had ended") {
		t.Errorf("finding %+v, want %s's warning of %s ...)", f, res.Scenario, calls)
	}
	if !res.Inconclusive || res.Safe {
		t.Errorf("%s: inconclusive %v, safe %v; want inconclusive", res.Scenario, res.Inconclusive, res.Safe)
	}
	problems := 0
	for _, p := range rep.Problems {
		if p.Code == CodeGoroutineLeak {
			problems++
		}
	}
	if problems != 1 {
		t.Errorf("the warning is %d problems of the report, want 1", problems)
	}
}

// A goroutine the first delivery of a scenario left running, calling while
// the second runs, is the scenario's, of the first delivery.
func TestCallOfAGoroutineLeftBehindByAnEarlierDelivery(t *testing.T) {
	// The sequential duplicate delivery's first delivery (after the
	// baseline) leaves the goroutine; its second wakes it.
	agent := leavingAgent(2, 3)
	s := NewSuite("left-behind", agent, OnlyScenario(ScenarioDuplicateSeq))
	endSuite(t, s)
	if _, err := s.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	plan := s.Plan()
	if len(plan) != 1 || plan[0].Name != ScenarioDuplicateSeq {
		t.Fatalf("plan %v, want %s alone", plan, ScenarioDuplicateSeq)
	}
	res, err := s.RunScenario(context.Background(), plan[0])
	if err != nil {
		t.Fatal(err)
	}
	var late []Operation
	for _, o := range res.Trace.Ops {
		if o.Identity == `"late"` {
			late = append(late, o)
		}
	}
	if len(late) != 1 || late[0].Invocation != 1 || !late[0].Detached {
		t.Errorf("the call of the goroutine delivery 1 left behind: %+v, want one, of invocation 1, detached", late)
	}
	if len(res.Trace.Refused) != 0 {
		t.Errorf("refused %q", res.Trace.Refused)
	}
}

// A goroutine the agent left running that calls a tool with the run's
// context after the run ended runs the tool as in production: the ended
// run's State is not asked again (it would run beside the next scenario's),
// no fault of it applies, and nothing more is recorded in it.
func TestCallAfterTheRunEndedRunsAsInProduction(t *testing.T) {
	put := func(string) {}
	wake, made := make(chan struct{}), make(chan error)
	agent := func(ctx context.Context) error {
		go func() {
			<-wake
			made <- tracedPut(ctx, put, "late")
		}()
		return tracedPut(ctx, put, "a")
	}
	var states atomic.Int32
	s := NewSuite("after-the-run", agent, State(func() any { states.Add(1); return 1 }))
	base, err := s.Baseline(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	before := states.Load()
	close(wake)
	if err := <-made; err != nil {
		t.Errorf("the late call returned %v", err)
	}
	if n := states.Load() - before; n != 0 {
		t.Errorf("State was asked %d more times for a call made after the run ended", n)
	}
	if len(base.Trace.Ops) != 1 {
		t.Errorf("the baseline's trace has %d calls, want 1", len(base.Trace.Ops))
	}
	// The call ran untested: the baseline that left its goroutine says so.
	assertLate(t, s.Report(), base, 1)
}

// The same agent, waiting for the goroutine it starts, leaves nothing
// behind: no warning, and the baseline is safe.
func TestCallOfAGoroutineWaitedForIsNoLateCall(t *testing.T) {
	put := func(string) {}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			tracedPut(ctx, put, "notified")
		}()
		defer wg.Wait()
		return tracedPut(ctx, put, "a")
	}
	s := NewSuite("waits", agent)
	base, err := s.Baseline(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rep := s.Report()
	if rep.Has(CodeGoroutineLeak) || base.Inconclusive || !base.Safe || len(base.Trace.Ops) != 2 {
		t.Errorf("findings %v, inconclusive %v, safe %v, %d calls; want no warning, safe, 2 calls", rep.Findings, base.Inconclusive, base.Safe, len(base.Trace.Ops))
	}
}

// A goroutine one suite's scenario left running calls a tool while another
// suite's run is active (two tests of a package, one after the other, or
// in parallel): with the ended run's context, with context.Background(),
// or without a context. With the context, the call is plainly the ended
// run's. Without it, the goroutine may serve either agent (a worker pool
// both use): the other suite's run is not blamed with an error (before, it
// refused the call, naming the first suite's scenario as if it were its
// own) but says it could not tell, and is inconclusive. Until its report,
// the first suite counts the late call; after it, the call has no report
// left to go to.
func TestLeftGoroutineCallsDuringAnotherSuite(t *testing.T) {
	for _, how := range []string{"ctx", "background", "none"} {
		for _, reportFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/reported=%v", how, reportFirst), func(t *testing.T) {
				put := func(string) {}
				wake, made := make(chan struct{}), make(chan struct{})
				agent := func(ctx context.Context) error {
					callCtx := map[string]context.Context{"ctx": ctx, "background": context.Background(), "none": nil}[how]
					go func() {
						<-wake
						tracedPut(callCtx, put, "late")
						close(made)
					}()
					return tracedPut(ctx, put, "a")
				}
				s := NewSuite("left", agent, OnlyScenario(ScenarioBaseline))
				endSuite(t, s)
				if _, err := s.Baseline(context.Background()); err != nil {
					t.Fatal(err)
				}
				var first *Report
				if reportFirst {
					first = s.Report()
				}
				other := func(ctx context.Context) error {
					close(wake)
					<-made
					return tracedPut(ctx, put, "b")
				}
				busy := NewSuite("other", other)
				endSuite(t, busy)
				res, err := busy.Baseline(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Trace.Refused) != 0 || len(res.Trace.Ops) != 1 {
					t.Errorf("the other suite answers for the first one's goroutine: refused %q, %d calls", res.Trace.Refused, len(res.Trace.Ops))
				}
				// Without the ended run's context, the call may have served
				// the other suite's agent (a pool both use): its run says
				// it could not tell, and is inconclusive, not unsafe.
				if how == "ctx" {
					if len(res.Findings) != 0 || res.Inconclusive {
						t.Errorf("a call with the ended run's context is reported in the other suite: %v", res.Findings)
					}
				} else if len(res.Findings) != 1 || res.Findings[0].Severity != SeverityWarning ||
					!slices.Equal(res.Findings[0].Ops, []string{"put"}) || !res.Inconclusive || res.Safe {
					t.Errorf("the other suite does not say it could not tell: inconclusive %v, safe %v, findings %v", res.Inconclusive, res.Safe, res.Findings)
				}
				again := s.Report()
				if reportFirst {
					if again.Has(CodeGoroutineLeak) || first.Has(CodeGoroutineLeak) {
						t.Errorf("a call made after the report was reported: %v", again.Findings)
					}
				} else if !again.Has(CodeGoroutineLeak) || !again.Baseline.Inconclusive {
					t.Errorf("the first suite does not report its goroutine's late call: %v", again.Findings)
				}
			})
		}
	}
}

// A tool without a context, called from a goroutine whose parent (a
// dispatcher the invocation started, which has returned) is gone from the
// stack snapshot: the run's world still knows the chain, and the call is
// the invocation's. (45c6702 made this path take the recorder's lock twice
// and hang.)
func TestCallFromAWorkerWhoseDispatcherReturned(t *testing.T) {
	put := func(string) {}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		release, dispatched := make(chan struct{}), make(chan struct{})
		wg.Add(1)
		go func() { // the dispatcher
			tracedPut(nil, put, "a") // the world learns the dispatcher's parent
			go func() {              // the worker
				defer wg.Done()
				<-release
				tracedPut(nil, put, "b")
			}()
			close(dispatched)
		}()
		<-dispatched
		time.Sleep(5 * time.Millisecond) // the dispatcher returns
		close(release)
		wg.Wait()
		return nil
	}
	done := make(chan *Result, 1)
	go func() {
		s := NewSuite("dispatcher", agent, StallTimeout(time.Second))
		defer s.Report()
		res, err := s.Baseline(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case res := <-done:
		if res == nil {
			return
		}
		var ids []string
		for _, o := range res.Trace.Ops {
			ids = append(ids, o.ID+" "+o.Identity)
		}
		if want := []string{`1:put#1 "a"`, `1:put#2 "b"`}; !slices.Equal(ids, want) {
			t.Errorf("calls %q, want %q (refused %q)", ids, want, res.Trace.Refused)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the baseline did not end: attributing the worker's call hung")
	}
}

var stateGet = &Op{Kind: KindRead, Name: "get", Params: []string{"k"}, Pos: "recorder_test.go:2"}

func tracedGet(ctx context.Context, get func(string) bool, k string) (bool, error) {
	args := []any{k}
	c, ctx := Begin(ctx, stateGet, args, nil, nil)
	if err := c.Start(); err != nil {
		return false, err
	}
	v := get(k)
	return v, c.Finish(nil, v)
}

// State that reads the world through the agent's own traced tool (with no
// context, or context.Background()) is the harness looking, not the agent
// calling: its reads are not in the trace, move no occurrence number, and
// are no context_detached.
func TestStateReadingThroughATracedTool(t *testing.T) {
	for _, withCtx := range []bool{false, true} {
		var mu sync.Mutex
		set := map[string]bool{}
		put := func(k string) { mu.Lock(); set[k] = true; mu.Unlock() }
		get := func(k string) bool { mu.Lock(); defer mu.Unlock(); return set[k] }
		agent := func(ctx context.Context) error {
			if ok, err := tracedGet(ctx, get, "a"); err != nil || ok {
				return err
			}
			return tracedPut(ctx, put, "a")
		}
		state := func() any {
			var ctx context.Context
			if withCtx {
				ctx = context.Background()
			}
			v, _ := tracedGet(ctx, get, "a")
			return v
		}
		rep, err := Run(context.Background(), "state-reads", agent, State(state), Setup(func(context.Context) error {
			mu.Lock()
			clear(set)
			mu.Unlock()
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, o := range rep.Baseline.Trace.Ops {
			ids = append(ids, o.ID)
		}
		if want := []string{"1:get#1", "1:put#1"}; !slices.Equal(ids, want) {
			t.Errorf("context %v: the baseline's calls are %q, want the agent's %q", withCtx, ids, want)
		}
		for _, r := range append([]*Result{rep.Baseline}, rep.Results...) {
			for _, f := range r.Findings {
				if f.Code == CodeContextDetached {
					t.Errorf("context %v, %s: %s", withCtx, r.Scenario, f.Message)
				}
			}
		}
	}
}

// A goroutine the baseline left running that calls a tool between two
// scenarios, while no run is active (here: from the next scenario's
// Setup's time), with the run's context or none, is counted for the
// baseline all the same, each of its calls.
func TestLateCallBetweenScenarios(t *testing.T) {
	for _, withCtx := range []bool{true, false} {
		t.Run(fmt.Sprintf("ctx=%v", withCtx), func(t *testing.T) {
			put := func(string) {}
			wake, made := make(chan struct{}), make(chan struct{})
			invocations := 0
			agent := func(ctx context.Context) error {
				invocations++
				if invocations == 1 {
					callCtx := ctx
					if !withCtx {
						callCtx = nil
					}
					go func() {
						<-wake
						tracedPut(callCtx, put, "late")
						tracedPut(callCtx, put, "later") // known from the first (lateCaller)
						close(made)
					}()
				}
				return tracedPut(ctx, put, "a")
			}
			setups := 0
			s := NewSuite("between", agent, Setup(func(context.Context) error {
				if setups++; setups == 2 { // the first scenario's
					if !Enabled() {
						t.Error("no run active and the suite not watching: the late call would take the inactive path")
					}
					close(wake)
					<-made
				}
				return nil
			}))
			base, err := s.Baseline(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.RunScenario(context.Background(), s.Plan()[0])
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Findings) != 0 || len(res.Trace.Refused) != 0 || len(res.Trace.Ops) != 1 {
				t.Errorf("%s answers for the baseline's goroutine: findings %v, refused %q, %d calls", res.Scenario, res.Findings, res.Trace.Refused, len(res.Trace.Ops))
			}
			assertLate(t, s.Report(), base, 2)
		})
	}
}
