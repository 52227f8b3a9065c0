package runtime

import (
	"context"
	"sync"
	"testing"
	"time"
)

// An agent that releases what it holds when its request's context ends
// (context.AfterFunc with context.WithoutCancel: the standard cleanup
// idiom) starts no goroutine itself: the harness cancels the invocation's
// context when it returns, and context runs the callback in a goroutine
// of its own. Its call is the invocation's, in every scenario and every
// run of the suite; before, whether it landed before the run ended
// (traced) or after (a late call, a goroutine_leak warning telling the
// agent to wait for goroutines it never started) was a race.
// The same holds in duplicate_delivery/concurrent, whose deliveries run
// at once: the harness waits for the callbacks once both have returned.
func TestAfterFuncCallsAreTheInvocations(t *testing.T) {
	var wg sync.WaitGroup
	for range 20 {
		put := func(string) {}
		agent := func(ctx context.Context) error {
			if err := tracedPut(ctx, put, "lock"); err != nil {
				return err
			}
			unlockWhenDone(ctx, &wg, put)
			return nil
		}
		s := NewSuite("afterfunc", agent)
		base, err := s.Baseline(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n := len(base.Trace.Ops); n != 2 {
			t.Fatalf("the baseline traced %d calls, want lock and unlock", n)
		}
		for _, sc := range s.Plan() {
			if _, err := s.RunScenario(context.Background(), sc); err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
		rep := s.Report()
		for _, f := range rep.Findings {
			if f.Code == CodeGoroutineLeak || f.Code == CodeFaultNotTriggered {
				t.Fatalf("%s: [%s] %s", f.Scenario, f.Code, f.Message)
			}
		}
		for _, res := range append(rep.Results, base) {
			// Every invocation that got its lock registered the release.
			locked, unlocks := 0, 0
			for _, o := range res.Trace.Ops {
				switch {
				case o.Identity == `"lock"` && o.Error == "" && o.Observation == ObservationReceived:
					locked++
				case o.Identity == `"unlock"`:
					unlocks++
				}
			}
			if unlocks != locked {
				t.Fatalf("%s: %d unlocks traced for %d locks taken", res.Scenario, unlocks, locked)
			}
		}
	}
}

// Under a scheduler (interleavings), the harness does not wait after the
// invocation returns: the callbacks' goroutines are the scenario's, and
// the scheduler's quiescence waits for their calls to reach a gate before
// the run ends. This pins that the unlock is traced in every schedule.
func TestAfterFuncCallsUnderSchedules(t *testing.T) {
	for range 10 {
		var wg sync.WaitGroup
		put := func(string) {}
		agent := func(ctx context.Context) error {
			var calls sync.WaitGroup
			for _, k := range []string{"x", "y"} {
				calls.Add(1)
				go func() { defer calls.Done(); tracedPut(ctx, put, k) }()
			}
			calls.Wait()
			unlockWhenDone(ctx, &wg, put)
			return nil
		}
		s := NewSuite("afterfunc-schedules", agent)
		if _, err := s.Baseline(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !s.Parallel(context.Background()) {
			t.Fatal("the two calls were not seen in parallel")
		}
		if _, err := s.Interleavings(context.Background(), func(*Result) {}); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		rep := s.Report()
		if rep.Has(CodeGoroutineLeak) {
			t.Fatalf("findings %v", rep.Findings)
		}
		scheduled := 0
		for _, res := range rep.Results {
			if res.Schedule == "" {
				continue
			}
			scheduled++
			unlocks := 0
			for _, o := range res.Trace.Ops {
				if o.Identity == `"unlock"` {
					unlocks++
				}
			}
			if unlocks != 1 {
				t.Fatalf("%s: %d unlocks traced, want 1", res.Scenario, unlocks)
			}
		}
		if scheduled == 0 {
			t.Fatal("no schedule ran")
		}
	}
}

// unlockWhenDone registers the cleanup idiom: when the invocation's
// context ends, a callback unlocks, with a context that outlives it.
func unlockWhenDone(ctx context.Context, wg *sync.WaitGroup, put func(string)) {
	wg.Add(1)
	context.AfterFunc(ctx, func() {
		defer wg.Done()
		tracedPut(context.WithoutCancel(ctx), put, "unlock")
	})
}

// afterFuncSuite runs every scenario of agent's suite and returns the
// report, once the callbacks counted by wg have all run.
func afterFuncSuite(t *testing.T, name string, agent func(context.Context) error, wg *sync.WaitGroup, opts ...Option) *Report {
	t.Helper()
	s := NewSuite(name, agent, opts...)
	if _, err := s.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, sc := range s.Plan() {
		if _, err := s.RunScenario(context.Background(), sc); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	return s.Report()
}

// noLateCalls fails on a goroutine_leak warning: the callbacks' calls
// landed after the run ended.
func noLateCalls(t *testing.T, rep *Report) {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Code == CodeGoroutineLeak {
			t.Fatalf("%s: [%s] %s", f.Scenario, f.Code, f.Message)
		}
	}
}

// Goroutines of another test, running in parallel, end while the agent
// runs: the process's goroutine count does not grow across the invocation.
// Whether a callback may run is read across the cancel alone, so the wait
// still happens. Before, the harness compared the count with the one
// before the invocation, skipped the wait, and every scenario reported
// the unlock as a late call.
func TestAfterFuncWhileOtherGoroutinesEnd(t *testing.T) {
	for range 5 {
		var wg sync.WaitGroup
		put := func(string) {}
		var (
			quit   chan struct{}
			end    *sync.Once
			others sync.WaitGroup
		)
		otherTest := func(context.Context) error { // alive before each invocation
			quit, end = make(chan struct{}), new(sync.Once)
			for range 3 {
				others.Add(1)
				go func(q chan struct{}) { defer others.Done(); <-q }(quit)
			}
			return nil
		}
		agent := func(ctx context.Context) error {
			defer func() { end.Do(func() { close(quit) }); others.Wait() }() // they end meanwhile
			if err := tracedPut(ctx, put, "lock"); err != nil {
				return err
			}
			wg.Add(1)
			context.AfterFunc(ctx, func() {
				defer wg.Done()
				time.Sleep(time.Millisecond) // a release over the network
				tracedPut(context.WithoutCancel(ctx), put, "unlock")
			})
			return nil
		}
		noLateCalls(t, afterFuncSuite(t, "afterfunc-churn", agent, &wg, Setup(otherTest)))
	}
}

// The agent registers the callback on a context of its own, which it
// cancels itself when it returns (context.WithTimeout with a deferred
// cancel, the common idiom). The callback's goroutine is then created by
// the invocation's goroutine, and is waited for too. Before, only
// callbacks started by the harness's cancel were, and most suites
// reported the release as a late call.
func TestAfterFuncOnTheAgentsOwnContext(t *testing.T) {
	for range 10 {
		var wg sync.WaitGroup
		put := func(string) {}
		agent := func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := tracedPut(ctx, put, "lock"); err != nil {
				return err
			}
			wg.Add(1)
			context.AfterFunc(ctx, func() {
				defer wg.Done()
				tracedPut(context.WithoutCancel(ctx), put, "unlock")
			})
			return nil
		}
		noLateCalls(t, afterFuncSuite(t, "afterfunc-own", agent, &wg))
	}
}

// In duplicate_delivery/concurrent, each delivery's callback calls a tool
// without a context: it is told by its goroutine, which descends from the
// delivery's own. Before, the callbacks descended from the harness's
// delivery goroutines, and both calls were charged to one delivery (a
// false duplicate_write of the unlock).
func TestContextlessAfterFuncInConcurrentDelivery(t *testing.T) {
	for range 10 {
		var wg sync.WaitGroup
		put := func(string) {}
		agent := lockThenAfter(&wg, put, func(context.Context) { tracedPut(nil, put, "unlock") })
		s := NewSuite("afterfunc-ctxless", agent)
		if _, err := s.Baseline(context.Background()); err != nil {
			t.Fatal(err)
		}
		var conc Scenario
		for _, sc := range s.Plan() {
			if sc.Name == ScenarioDuplicateConcurrent {
				conc = sc
			}
		}
		res, err := s.RunScenario(context.Background(), conc)
		if err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		s.Report()
		byDelivery := map[int]int{}
		for _, o := range res.Trace.Ops {
			if o.Identity == `"unlock"` {
				byDelivery[o.Invocation]++
			}
		}
		if byDelivery[1] != 1 || byDelivery[2] != 1 {
			t.Fatalf("unlocks by delivery %v, want one each", byDelivery)
		}
	}
}

// A callback that made its call and works on before it returns (here 60ms
// of CPU; on a loaded machine, a goroutine about to return that waits that
// long for a CPU) is no goroutine left running: it waits for nothing but
// to be run. The baseline reported it as a goroutine_leak (its grace is
// 20ms), about once in 15 runs of TestAfterFuncCallsAreTheInvocations
// under -race with two test processes at once.
func TestAfterFuncThatWorksOnIsNoLeak(t *testing.T) {
	var wg sync.WaitGroup
	put := func(string) {}
	agent := lockThenAfter(&wg, put, func(ctx context.Context) {
		tracedPut(context.WithoutCancel(ctx), put, "unlock")
		for start := time.Now(); time.Since(start) < 60*time.Millisecond; {
			// what is left of the cleanup, on the CPU
		}
	})
	s := NewSuite("afterfunc-works-on", agent)
	base, err := s.Baseline(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, f := range base.Findings {
		t.Errorf("baseline: [%s] %s", f.Code, f.Message)
	}
	if n := len(base.Trace.Ops); n != 2 {
		t.Errorf("the baseline traced %d calls, want lock and unlock", n)
	}
}

// lockThenAfter is an agent that takes a lock and registers callback to
// run, counted by wg, when the invocation's context ends.
func lockThenAfter(wg *sync.WaitGroup, put func(string), callback func(ctx context.Context)) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := tracedPut(ctx, put, "lock"); err != nil {
			return err
		}
		wg.Add(1)
		context.AfterFunc(ctx, func() {
			defer wg.Done()
			callback(ctx)
		})
		return nil
	}
}

// In duplicate_delivery/concurrent, each delivery's invocation sees the
// other delivery start its goroutines while it runs. Those are the
// harness's: neither invocation is taken for one whose cancel may have
// started a callback, and no stack snapshot is taken to look for one.
// Before, both were, in every suite: a stop of the world and a traceback
// of every goroutine, for an agent that starts none.
func TestConcurrentDeliveriesAreNotCallbacks(t *testing.T) {
	put := func(string) {}
	agent := putsAgent(put, "a", "b", "c")
	for range 20 {
		s := NewSuite("concurrent-no-callbacks", agent)
		if _, err := s.Baseline(context.Background()); err != nil {
			t.Fatal(err)
		}
		var (
			mu   sync.Mutex
			recs []*recorder
		)
		testHookDelivery = func(r *recorder, n int) {
			mu.Lock()
			recs = append(recs, r)
			mu.Unlock()
		}
		for _, sc := range s.Plan() {
			if sc.Kind != ScenarioDuplicateConcurrent {
				continue
			}
			if _, err := s.RunScenario(context.Background(), sc); err != nil {
				testHookDelivery = nil
				t.Fatal(err)
			}
		}
		testHookDelivery = nil
		if len(recs) != 2 {
			t.Fatalf("%d concurrent deliveries seen, want 2", len(recs))
		}
		r := recs[0]
		r.mu.Lock()
		for _, inv := range r.all {
			if inv.callbacks {
				r.mu.Unlock()
				t.Fatalf("delivery %d, whose agent starts no goroutine, was taken for one that may have started a context.AfterFunc callback", inv.n)
			}
		}
		r.mu.Unlock()
	}
}
