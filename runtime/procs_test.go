package runtime

import (
	"context"
	"flag"
	"os"
	goruntime "runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeProcs stands in for runtime.GOMAXPROCS and SetDefaultGOMAXPROCS: a
// process of def processors by default, which the program may have set to
// another value.
type fakeProcs struct {
	mu       sync.Mutex
	n, def   int
	sets     []int // each positive value set, in order
	defaults int   // calls of SetDefaultGOMAXPROCS
}

func useFakeProcs(t *testing.T, n, def int) *fakeProcs {
	t.Helper()
	// The environment the suite reads: neither set, as in a plain go test.
	for _, k := range []string{"GOMAXPROCS", "AGENTIDEM_PROCS"} {
		if v, ok := os.LookupEnv(k); ok {
			os.Unsetenv(k)
			t.Cleanup(func() { os.Setenv(k, v) })
		}
	}
	// An earlier test's suite gives the processors back procsRaiseDelay
	// after its report, or when the collector finds it unreachable if it
	// never reported (late.go).
	waitProcsRaised(t)
	f := &fakeProcs{n: n, def: def}
	oldMax, oldDef := maxProcs, defaultMaxProcs
	maxProcs = func(v int) int {
		f.mu.Lock()
		defer f.mu.Unlock()
		prev := f.n
		if v > 0 {
			f.n = v
			f.sets = append(f.sets, v)
		}
		return prev
	}
	defaultMaxProcs = func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.n = f.def
		f.defaults++
	}
	t.Cleanup(func() {
		waitProcsRaised(t) // no timer of this test's left to call the fakes
		maxProcs, defaultMaxProcs = oldMax, oldDef
	})
	return f
}

// waitProcsRaised waits until no suite runs and the processors are given
// back.
func waitProcsRaised(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		procPace.mu.Lock()
		done := procPace.suites == 0 && !procPace.lowered
		procPace.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the processors were not given back after the suites reported")
		}
		goruntime.GC()
		time.Sleep(time.Millisecond)
	}
}

func (f *fakeProcs) now() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// procsSeen notes the processors the process had while each invocation
// ran; the deliveries of duplicate_delivery/concurrent note at once.
type procsSeen struct {
	mu sync.Mutex
	n  []int
}

func (p *procsSeen) note(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n = append(p.n, n)
}

func (p *procsSeen) all() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.n)
}

// procsAgent makes one write, and notes the processors the process had
// while each of its invocations ran.
func procsAgent(s *store, seen *procsSeen) func(context.Context) error {
	return func(ctx context.Context) error {
		seen.note(maxProcs(0))
		return s.putTraced(ctx, "a", 1)
	}
}

func TestASuiteRunsOnOneProcessorUntilItReports(t *testing.T) {
	f := useFakeProcs(t, 4, 4)
	s := newStore()
	var seen procsSeen
	suite := NewSuite("procs", procsAgent(s, &seen), Setup(func(context.Context) error { s = newStore(); return nil }))
	if _, err := suite.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, sc := range suite.Plan() {
		if _, err := suite.RunScenario(context.Background(), sc); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range seen.all() {
		if n != 1 {
			t.Fatalf("invocation %d ran with %d processors, want 1", i+1, n)
		}
	}
	if n := len(seen.all()); n < 3 {
		t.Fatalf("%d invocations, want the baseline and the scenarios'", n)
	}
	suite.Report()
	waitProcsRaised(t)
	if f.now() != 4 {
		t.Fatalf("%d processors after the report, want the 4 the process had", f.now())
	}
	if f.defaults != 1 {
		t.Fatalf("SetDefaultGOMAXPROCS called %d times, want once: the process had the default", f.defaults)
	}
}

func TestSuitesSideBySideHaveTheProgramsProcessors(t *testing.T) {
	f := useFakeProcs(t, 4, 4)
	s := newStore()
	var seen procsSeen
	setup := Setup(func(context.Context) error { s = newStore(); return nil })
	a := NewSuite("a", procsAgent(s, &seen), setup)
	b := NewSuite("b", procsAgent(s, &seen), setup)
	if _, err := a.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.now() != 1 {
		t.Fatalf("%d processors while one suite runs, want 1", f.now())
	}
	if _, err := b.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.now() != 4 {
		t.Fatalf("%d processors while two suites run, want the 4 of the program", f.now())
	}
	a.Report()
	if f.now() != 1 {
		t.Fatalf("%d processors when one of two suites reported, want 1 for the other", f.now())
	}
	b.Report()
	waitProcsRaised(t)
	if f.now() != 4 {
		t.Fatalf("%d processors after both reported, want 4", f.now())
	}
}

func TestSuitesFollowingOneAnotherKeepOneProcessor(t *testing.T) {
	f := useFakeProcs(t, 4, 4)
	delay := procsRaiseDelay
	procsRaiseDelay = time.Hour // the suites below follow one another within it
	t.Cleanup(func() { procsRaiseDelay = delay })
	s := newStore()
	var seen procsSeen
	setup := Setup(func(context.Context) error { s = newStore(); return nil })
	for range 3 {
		if _, err := Run(context.Background(), "procs", procsAgent(s, &seen), setup); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.sets) != 1 || f.now() != 1 {
		t.Fatalf("GOMAXPROCS set to %v for three suites in a row, now %d; want it set to 1 once and kept", f.sets, f.now())
	}
	raiseIdleProcs() // the timer, an hour early
	if f.now() != 4 {
		t.Fatalf("%d processors once no suite ran for the delay, want 4", f.now())
	}
	procPace.mu.Lock()
	procPace.raise.Stop()
	procPace.mu.Unlock()
}

func TestAProcessorCountOfTheProgramsOwnIsRestored(t *testing.T) {
	f := useFakeProcs(t, 3, 4) // the program set 3 where the default is 4
	s := newStore()
	var seen procsSeen
	if _, err := Run(context.Background(), "procs", procsAgent(s, &seen), Setup(func(context.Context) error { s = newStore(); return nil })); err != nil {
		t.Fatal(err)
	}
	if n := seen.all()[0]; n != 1 {
		t.Fatalf("the baseline ran with %d processors, want 1", n)
	}
	waitProcsRaised(t)
	if f.now() != 3 {
		t.Fatalf("%d processors after the suite, want the program's 3", f.now())
	}
}

func TestAProcessorCountSetDuringTheSuiteIsKept(t *testing.T) {
	f := useFakeProcs(t, 4, 4)
	s := newStore()
	var set sync.Once
	agent := func(ctx context.Context) error {
		set.Do(func() { maxProcs(2) }) // the program's choice, made while the suite runs
		return s.putTraced(ctx, "a", 1)
	}
	if _, err := Run(context.Background(), "procs", agent, Setup(func(context.Context) error { s = newStore(); return nil })); err != nil {
		t.Fatal(err)
	}
	waitProcsRaised(t)
	if f.now() != 2 {
		t.Fatalf("%d processors after the suite, want the 2 the program set", f.now())
	}
	if f.defaults != 0 {
		t.Fatalf("SetDefaultGOMAXPROCS called %d times, want none: the program chose", f.defaults)
	}
}

func TestProcessorsTheUserChoseAreLeftAlone(t *testing.T) {
	for _, env := range []struct{ key, value string }{
		{"GOMAXPROCS", "4"},
		{"AGENTIDEM_PROCS", "default"},
		{"test.cpu", "4"}, // go test -cpu 4
	} {
		t.Run(env.key, func(t *testing.T) {
			f := useFakeProcs(t, 4, 4)
			if env.key == "test.cpu" {
				if err := flag.Set("test.cpu", env.value); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { flag.Set("test.cpu", "") })
			} else {
				t.Setenv(env.key, env.value)
			}
			s := newStore()
			var seen procsSeen
			if _, err := Run(context.Background(), "procs", procsAgent(s, &seen), Setup(func(context.Context) error { s = newStore(); return nil })); err != nil {
				t.Fatal(err)
			}
			if len(f.sets) != 0 || f.defaults != 0 {
				t.Fatalf("GOMAXPROCS set to %v and reset to the default %d times with %s=%s, want neither", f.sets, f.defaults, env.key, env.value)
			}
			for _, n := range seen.all() {
				if n != 4 {
					t.Fatalf("an invocation ran with %d processors, want the 4 the user chose", n)
				}
			}
		})
	}
}

// The real runtime: an invocation sees one processor, and the process has
// its own count back after the report.
func TestASuiteRunsOnOneRealProcessor(t *testing.T) {
	if procsLeftAlone() {
		t.Skip("GOMAXPROCS set in the environment, go test -cpu, or AGENTIDEM_PROCS=default")
	}
	prev := goruntime.GOMAXPROCS(2) // two at least, whatever the machine
	t.Cleanup(func() { goruntime.GOMAXPROCS(prev); goruntime.SetDefaultGOMAXPROCS() })
	s := newStore()
	var seen procsSeen
	agent := func(ctx context.Context) error {
		seen.note(goruntime.GOMAXPROCS(0))
		return s.putTraced(ctx, "a", 1)
	}
	if _, err := Run(context.Background(), "procs", agent, Setup(func(context.Context) error { s = newStore(); return nil })); err != nil {
		t.Fatal(err)
	}
	for i, n := range seen.all() {
		if n != 1 {
			t.Fatalf("invocation %d ran with %d processors, want 1", i+1, n)
		}
	}
	waitProcsRaised(t)
	if n := goruntime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("%d processors after the suite, want the 2 the test set", n)
	}
}
