package runtime

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"testing"
	"time"
)

// countDumps counts the stack dumps of the process from now until the
// returned function is called, which returns the count.
func countDumps(t *testing.T) func() int {
	t.Helper()
	var (
		mu sync.Mutex
		n  int
	)
	testHookStacks = func() {
		mu.Lock()
		n++
		mu.Unlock()
	}
	t.Cleanup(func() { testHookStacks = nil })
	// Each test runs in a goroutine go test created for it, which the last
	// dump may stand for (TestCensusTakesTheAskingGoroutineForTheOneCreated):
	// the count starts from no dump. goroutineID's first call starts
	// goroutines to find where the id lies: not in a test's count.
	goroutineID()
	census.mu.Lock()
	census.ids = nil
	census.mu.Unlock()
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// startOther starts a goroutine not the harness's, which stays until the
// test ends, and returns its id.
func startOther(t *testing.T) uint64 {
	other := make(chan uint64)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		other <- goroutineID()
		<-stop
	}()
	return <-other
}

// The goroutines before a gated scenario are listed once: while only the
// harness's own goroutines were created since, and have ended, the dump
// stands. A goroutine anyone else starts is listed by a new dump.
func TestCensusReusesADumpWhileOnlyTheHarnessStartedGoroutines(t *testing.T) {
	dumps := countDumps(t)
	first, _, known := goroutinesBefore()
	if !known {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	if got := dumps(); got != 1 {
		t.Fatalf("the first census took %d dumps, want 1", got)
	}

	// The harness starts goroutines, which end.
	for range 3 {
		done := make(chan struct{})
		goHarness(func() { close(done) })
		<-done
	}
	again, _, _ := goroutinesBefore()
	if got := dumps(); got != 1 {
		t.Fatalf("after the harness's goroutines ended, the census took %d dumps in all, want the first one only", got)
	}
	if len(again) != len(first) {
		t.Fatalf("the reused census lists %d goroutines, the dump %d", len(again), len(first))
	}

	// Someone else starts a goroutine that stays: the census must list it.
	id := startOther(t)
	after, _, _ := goroutinesBefore()
	if got := dumps(); got != 2 {
		t.Fatalf("after another goroutine was created, the census took %d dumps in all, want 2", got)
	}
	if !after[id] {
		t.Fatalf("the census does not list goroutine %d, created by another since the last dump", id)
	}
}

// A goroutine of the harness that has not ended (a delivery still
// running, an invocation the agent stalled) is one the last dump did not
// list: the census takes a new one, which lists it.
func TestCensusDumpsAgainWhileAHarnessGoroutineRuns(t *testing.T) {
	dumps := countDumps(t)
	if _, _, known := goroutinesBefore(); !known {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	id, end := heldGoroutine(goHarness, true)
	ids, _, _ := goroutinesBefore()
	end()
	if got := dumps(); got != 2 {
		t.Fatalf("with a goroutine of the harness running, the census took %d dumps in all, want 2", got)
	}
	if !ids[id] {
		t.Fatalf("the census does not list goroutine %d of the harness, still running", id)
	}
}

// A goroutine of the harness signals its end (closes a channel) before
// it ends, and on a loaded machine its thread can be descheduled right
// there for milliseconds: the census waits for its end rather than dump
// (CI failed TestSuiteOfASerialAgentDumpsOnce when it only yielded a few
// times). Here the goroutine ends a millisecond after its signal, at
// another goroutine's word, and the census must wait for it; one that has
// not ended within the grace is listed by a dump (the test above).
func TestCensusWaitsForAHarnessGoroutineThatSignalledItsEnd(t *testing.T) {
	grace := endGrace
	endGrace = time.Minute
	t.Cleanup(func() { endGrace = grace })
	// Started before the first dump, so that it is no goroutine created
	// since.
	release := make(chan struct{})
	signalled := make(chan struct{})
	go func() {
		<-signalled
		time.Sleep(time.Millisecond)
		close(release)
	}()
	dumps := countDumps(t)
	if _, _, known := goroutinesBefore(); !known {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	done := make(chan struct{})
	goHarness(func() {
		close(done)
		<-release
	})
	<-done
	close(signalled)
	goroutinesBefore()
	if got := dumps(); got != 1 {
		t.Fatalf("the census took %d dumps in all, want 1: it did not wait for the harness's goroutine to end", got)
	}
	select {
	case <-release:
	default:
		t.Fatal("the census returned before the harness's goroutine could end, yet took no dump")
	}
}

// A suite of a serial agent, whose scenarios start no goroutine of their
// own, dumps the stacks of the process once: for its baseline. Its other
// gated scenario (duplicate_delivery/concurrent) reuses that dump. Before
// the census, it took two (measured: 2 with goroutinesBefore always
// dumping).
// serialPuts returns an agent that puts keys one after the other, and its
// Setup.
func serialPuts(keys ...string) (agent func(context.Context) error, setup func(context.Context) error) {
	op := &Op{Name: "put", Kind: KindWrite, Params: []string{"k"}}
	var (
		mu   sync.Mutex
		rows map[string]bool
	)
	put := func(ctx context.Context, k string) error {
		c, _ := Begin(ctx, op, []any{k}, nil, nil)
		if err := c.Start(); err != nil {
			return err
		}
		mu.Lock()
		rows[k] = true
		mu.Unlock()
		return c.Finish(nil)
	}
	agent = func(ctx context.Context) error {
		for _, k := range keys {
			if err := put(ctx, k); err != nil {
				return err
			}
		}
		return nil
	}
	setup = func(context.Context) error {
		mu.Lock()
		rows = map[string]bool{}
		mu.Unlock()
		return nil
	}
	return agent, setup
}

func TestSuiteOfASerialAgentDumpsOnce(t *testing.T) {
	agent, setup := serialPuts("a", "b", "c")
	if _, _, known := goroutinesBefore(); !known {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	// The first suite of a process finds the runtime starting goroutines
	// of its own (the collector's workers) and takes more dumps.
	if _, err := Run(context.Background(), "serial", agent, Setup(setup)); err != nil {
		t.Fatal(err)
	}
	// A goroutine not the harness's, as go test starts one per test: the
	// last dump no longer stands. Goroutines left running by earlier tests
	// of the package can start one too (a timer's callback), so the fewest
	// dumps of a few suites is the figure. On a loaded machine (CI, with
	// go test -race running other packages beside) five suites in a row
	// once all took three: up to twenty run, until one takes the one.
	fewest := -1
	var rep *Report
	for range 20 {
		if fewest == 1 {
			break
		}
		ended := make(chan struct{})
		go close(ended)
		<-ended
		dumps := countDumps(t)
		var err error
		rep, err = Run(context.Background(), "serial", agent, Setup(setup))
		if err != nil {
			t.Fatal(err)
		}
		if n := dumps(); fewest < 0 || n < fewest {
			fewest = n
		}
	}
	concurrent := false
	for _, r := range rep.Results {
		concurrent = concurrent || r.Scenario == "duplicate_delivery/concurrent"
	}
	if !concurrent {
		t.Fatal("the suite ran no duplicate_delivery/concurrent scenario")
	}
	if fewest != 1 {
		t.Fatalf("the suite took %d stack dumps at the fewest, want 1 (its baseline's)", fewest)
	}
}

// Suites of consecutive tests, each in the goroutine go test starts for
// its test: the goroutine of the test before, created since the last dump
// and ended, called for no new dump. Before the census took in the goroutine
// that asked, every suite of a test after the first dumped the stacks in
// its baseline: the goroutines of two tests were created since.
func TestSuitesOfConsecutiveTestsDumpOnce(t *testing.T) {
	if _, _, known := goroutinesBefore(); !known {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	agent, setup := serialPuts("a", "b")
	suite := func(t *testing.T) {
		if _, err := Run(context.Background(), "serial", agent, Setup(setup)); err != nil {
			t.Fatal(err)
		}
	}
	dumps := countDumps(t)
	t.Run("first", suite)  // dumps: the census was emptied
	t.Run("second", suite) // its goroutine is the one created since
	// Goroutines left running by earlier tests of the package can start
	// one (a timer's callback): one test of the five may dump. Without the
	// goroutine taken in, every other test did. On a loaded machine a
	// harness goroutine can outlive endGrace and call for a dump too (CI,
	// with other processes busy: two of five once): the series is run up
	// to three times, and one with at most one dump shows the census
	// stands; without it every test of every series dumps. Three series
	// all dumped once, in CI beside a -race run of another package: up to
	// eight run.
	var dumped []string
	for round := range 8 {
		dumped = dumped[:0]
		for i := range 5 {
			before := dumps()
			name := fmt.Sprintf("next-%d-%d", round, i)
			t.Run(name, suite)
			if n := dumps() - before; n > 0 {
				dumped = append(dumped, fmt.Sprintf("%s (%d)", name, n))
			}
		}
		if len(dumped) <= 1 {
			return
		}
	}
	t.Fatalf("the suites of tests after another's took stack dumps in each of eight series, the last: %v; want none, or one where another goroutine was created", dumped)
}

// A test's suite asks from the goroutine go test started for the test,
// created since the last dump: that goroutine alone does not call for a
// new one, and the census lists it. One more goroutine created does.
func TestCensusTakesTheAskingGoroutineForTheOneCreated(t *testing.T) {
	dumps := countDumps(t)
	if _, _, known := goroutinesBefore(); !known {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	type answer struct {
		self uint64
		ids  map[uint64]bool
	}
	ask := func(another bool) answer {
		got := make(chan answer)
		stop := make(chan struct{})
		defer close(stop)
		go func() { // as testing.(*T).Run starts a test
			if another {
				started := make(chan struct{})
				go func() {
					close(started)
					<-stop
				}()
				<-started
			}
			ids, _, _ := goroutinesBefore()
			got <- answer{goroutineID(), ids}
		}()
		return <-got
	}
	a := ask(false)
	if got := dumps(); got != 1 {
		t.Fatalf("asked from a goroutine created since the dump, the census took %d dumps in all, want the first one only", got)
	}
	if !a.ids[a.self] {
		t.Fatalf("the census does not list the goroutine %d that asked", a.self)
	}
	b := ask(true)
	if got := dumps(); got != 2 {
		t.Fatalf("with another goroutine created besides the one asking, the census took %d dumps in all, want 2", got)
	}
	if !b.ids[b.self] {
		t.Fatalf("the new dump does not list the goroutine %d that asked", b.self)
	}
}

// Goroutines a test framework starts for the harness and waits for (go
// test's subtests of a suite's failing scenarios) keep the dump standing,
// when as many as said were created; more, fewer, or a dump meanwhile,
// and the next census dumps again.
func TestHarnessGoroutinesKeepTheCensus(t *testing.T) {
	dumps := countDumps(t)
	if _, _, known := goroutinesBefore(); !known {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	subtests := func(k int) func() {
		return func() {
			for range k {
				done := make(chan struct{})
				go close(done) // as testing.T.Run: a goroutine, waited for
				<-done
			}
		}
	}
	HarnessGoroutines(2, subtests(2))
	goroutinesBefore()
	if got := dumps(); got != 1 {
		t.Fatalf("after two subtests counted as the harness's, the census took %d dumps in all, want the first one only", got)
	}
	HarnessGoroutines(1, subtests(2)) // one started that was not said
	goroutinesBefore()
	if got := dumps(); got != 2 {
		t.Fatalf("after one goroutine more than said, the census took %d dumps in all, want 2", got)
	}
	// Fewer than said: counted, the one said and not started would stand
	// for someone else's goroutine, started after and still running.
	HarnessGoroutines(2, subtests(1))
	id := startOther(t)
	ids, _, _ := goroutinesBefore()
	if got := dumps(); got != 3 {
		t.Fatalf("after one goroutine fewer than said, and another's since, the census took %d dumps in all, want 3", got)
	}
	if !ids[id] {
		t.Fatalf("the census does not list goroutine %d, started by another after the subtests", id)
	}
	HarnessGoroutines(1, func() {
		census.mu.Lock()
		census.ids = nil // another suite's dump is due
		census.mu.Unlock()
		goroutinesBefore()
		subtests(1)() // after that dump, and not counted
	})
	goroutinesBefore()
	if got := dumps(); got != 5 {
		t.Fatalf("with a dump taken while the subtests ran, the census took %d dumps in all, want 5", got)
	}
}

// BenchmarkGoroutinesBefore: what a gated scenario pays to list the
// goroutines before it, with a new stack dump (another goroutine was
// created since the last) and with the last dump reused (only the
// harness's goroutines were, and ended).
//
//	go test -run '^$' -bench GoroutinesBefore -cpu 1,2 ./runtime/
func BenchmarkGoroutinesBefore(b *testing.B) {
	if _, _, known := goroutinesBefore(); !known {
		b.Skip("runtime/metrics does not count created goroutines here")
	}
	// The goroutines of a test binary: go test's own, and a few parked.
	stop := make(chan struct{})
	defer close(stop)
	for range 10 {
		go func() { <-stop }()
	}
	b.Run("dump", func(b *testing.B) {
		for b.Loop() {
			ended := make(chan struct{})
			go close(ended) // not the harness's: the last dump no longer stands
			<-ended
			goroutinesBefore()
		}
	})
	b.Run("reused", func(b *testing.B) {
		for b.Loop() {
			ended := make(chan struct{})
			goHarness(func() { close(ended) }) // the harness's, and it ends
			<-ended
			goroutinesBefore()
		}
	})
}

// A goroutine the harness starts aside (testkit's opening of a report
// file) is one the scenarios under gates take for one that was there
// before them: while it runs, the census neither dumps again nor waits
// for it, and lists it.
func TestHarnessAsideGoroutineKeepsTheCensus(t *testing.T) {
	dumps := countDumps(t)
	if _, _, known := goroutinesBefore(); !known {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	id, end := heldGoroutine(HarnessAside, true)
	grace := endGrace
	t.Cleanup(func() { endGrace = grace })
	endGrace = 100 * time.Millisecond // waited for, it would be dumped after this
	ids, _, _ := goroutinesBefore()
	end()
	if got := dumps(); got != 1 {
		t.Fatalf("with a goroutine started aside running, the census took %d dumps in all, want the first one only", got)
	}
	if !ids[id] {
		t.Fatalf("the census does not list goroutine %d, started aside", id)
	}
	// Started before the census asked, and not yet run: the census waits
	// for it to be listed, and does not dump.
	endGrace = 10 * time.Second // a loaded machine may be slow to run it
	_, end2 := heldGoroutine(HarnessAside, false)
	ids, _, _ = goroutinesBefore()
	if got := dumps(); got != 1 {
		t.Fatalf("with a goroutine started aside just before, the census took %d dumps in all, want the first one only", got)
	}
	if id := end2(); !ids[id] {
		t.Fatalf("the census does not list goroutine %d, started aside just before it asked", id)
	}
}

// heldGoroutine starts a goroutine with start, which stays until end is
// called; end returns once it has ended, with its id. With running, it
// returns once the goroutine runs, with its id; else at once, with 0.
func heldGoroutine(start func(func()), running bool) (id uint64, end func() uint64) {
	ids := make(chan uint64, 1)
	stop := make(chan struct{})
	ended := make(chan struct{})
	var self uint64
	start(func() {
		defer close(ended)
		self = goroutineID()
		ids <- self
		<-stop
	})
	if running {
		id = <-ids
	}
	return id, func() uint64 {
		close(stop)
		<-ended
		return self
	}
}

// The dump takes in the goroutine of each test whose suite asks (above),
// but not without end: ids are never reused, so a test's stays listed
// after it ended, and a binary of many tests copied a list that grew by
// one a test at each scenario run under gates. Past maxAdopted the census
// dumps again, and the new list holds only the goroutines still alive.
func TestCensusListStaysBoundedAcrossTests(t *testing.T) {
	dumps := countDumps(t)
	if _, _, known := goroutinesBefore(); !known {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	ask := func() int {
		got := make(chan int)
		go func() { // as testing.(*T).Run starts a test, which then ends
			ids, _, _ := goroutinesBefore()
			got <- len(ids)
		}()
		return <-got
	}
	tests := 4 * min(maxAdopted, 64)
	largest := 0
	for range tests {
		largest = max(largest, ask())
	}
	live := goruntime.NumGoroutine()
	if limit := live + min(maxAdopted, 64) + 8; largest > limit {
		t.Fatalf("after %d tests the census listed %d goroutines, with %d alive: want at most %d (those alive and up to maxAdopted=%d taken in since the last dump)", tests, largest, live, limit, maxAdopted)
	}
	// One dump for the first test, then one per maxAdopted tests taken in;
	// a goroutine left running by an earlier test of the package may start
	// one more now and then.
	if n, want := dumps(), 1+tests/max(maxAdopted, 1); n < want-1 || n > want+3 {
		t.Fatalf("the census took %d dumps for %d tests, want about %d (one per %d tests taken in)", n, tests, want, maxAdopted)
	}
}
