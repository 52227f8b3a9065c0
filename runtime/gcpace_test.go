package runtime

import (
	"context"
	"os"
	goruntime "runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// fakeGC stands in for debug.SetGCPercent: it keeps the percent the
// collector would have, from 100, and counts the calls.
type fakeGC struct {
	mu      sync.Mutex
	percent int
	calls   int
}

func useFakeGC(t *testing.T) *fakeGC {
	t.Helper()
	// The environment the suite reads: neither set, as in a plain go test.
	for _, k := range []string{"GOGC", "AGENTIDEM_GC"} {
		if v, ok := os.LookupEnv(k); ok {
			os.Unsetenv(k)
			t.Cleanup(func() { os.Setenv(k, v) })
		}
	}
	// An earlier test's suite that was never reported ends when the
	// collector finds it unreachable (its cleanup, late.go), and a
	// reported one's raise is undone after the next collection: until
	// then, the suites of this test would find the headroom given already
	// and leave the fake alone (seen once in CI, after a run of tests that
	// make suites).
	waitRestored(t, func() bool {
		gcPace.mu.Lock()
		defer gcPace.mu.Unlock()
		return gcPace.suites == 0 && gcPace.set == 0 && !gcPace.armed
	})
	f := &fakeGC{percent: 100}
	old := setGCPercent
	setGCPercent = func(p int) int {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls++
		prev := f.percent
		f.percent = p
		return prev
	}
	t.Cleanup(func() {
		waitRestored(t, func() bool { // no cleanup of this test's left to call the fake
			gcPace.mu.Lock()
			defer gcPace.mu.Unlock()
			return !gcPace.armed
		})
		setGCPercent = old
	})
	return f
}

func (f *fakeGC) now() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.percent
}

// waitRestored collects until ok holds: the restore runs from a cleanup,
// after a collection, on the runtime's cleanup goroutine.
func waitRestored(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("the collector's percent was not restored after collections")
		}
		goruntime.GC()
		time.Sleep(time.Millisecond)
	}
}

// skipWithoutRaise skips a test when the live heap is large enough that
// GOGC=100 leaves the collector its headroom: nothing is raised.
func skipWithoutRaise(t *testing.T) {
	t.Helper()
	goruntime.GC()
	if live := liveHeap(); gcPercentFor(live) <= 100 {
		t.Skipf("a live heap of %d MB has the headroom already", live>>20)
	}
}

// paceAgent makes one write, enough for a suite to run its scenarios.
func paceAgent(s *store) func(context.Context) error {
	return func(ctx context.Context) error { return s.putTraced(ctx, "a", 1) }
}

func TestSuiteGivesTheCollectorHeadroomUntilAfterItReports(t *testing.T) {
	f := useFakeGC(t)
	s := newStore()
	suite := NewSuite("pace", paceAgent(s), Setup(func(context.Context) error { s = newStore(); return nil }))
	if f.now() != 100 {
		t.Fatalf("percent %d before the suite ran, want the collector's 100", f.now())
	}
	skipWithoutRaise(t)
	if _, err := suite.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := f.now()
	if want <= 100 {
		t.Fatalf("percent %d while the suite runs, want it raised", want)
	}
	for _, sc := range suite.Plan() {
		if _, err := suite.RunScenario(context.Background(), sc); err != nil {
			t.Fatal(err)
		}
	}
	suite.Report()
	// Back only after a collection: at once, it would start one.
	if f.now() != want {
		t.Fatalf("percent %d right after the report, want %d until the next collection", f.now(), want)
	}
	waitRestored(t, func() bool { return f.now() == 100 })
}

func TestSuitesFollowingOneAnotherKeepTheHeadroom(t *testing.T) {
	f := useFakeGC(t)
	skipWithoutRaise(t)
	s := newStore()
	setup := Setup(func(context.Context) error { s = newStore(); return nil })
	for range 3 {
		if _, err := Run(context.Background(), "pace", paceAgent(s), setup); err != nil {
			t.Fatal(err)
		}
	}
	// One raise for the three suites: a restore between two of them needs
	// a collection between them, and none was asked for.
	if f.calls != 1 {
		t.Fatalf("%d calls of SetGCPercent for three suites in a row, want 1", f.calls)
	}
	waitRestored(t, func() bool { return f.now() == 100 })
	// A suite started after the restore raises it again.
	if _, err := Run(context.Background(), "pace", paceAgent(s), setup); err != nil {
		t.Fatal(err)
	}
	waitRestored(t, func() bool { return f.now() == 100 })
}

func TestCollectorLeftAloneWhenTheProgramChoseItsPacing(t *testing.T) {
	for _, tc := range []struct {
		name string
		prep func(t *testing.T, f *fakeGC)
		want int
	}{
		{"GOGC set", func(t *testing.T, f *fakeGC) { t.Setenv("GOGC", "100") }, 100},
		{"AGENTIDEM_GC=default", func(t *testing.T, f *fakeGC) { t.Setenv("AGENTIDEM_GC", "default") }, 100},
		{"SetGCPercent called", func(t *testing.T, f *fakeGC) { f.percent = 150 }, 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := useFakeGC(t)
			tc.prep(t, f)
			s := newStore()
			if _, err := Run(context.Background(), "pace", paceAgent(s), Setup(func(context.Context) error { s = newStore(); return nil })); err != nil {
				t.Fatal(err)
			}
			goruntime.GC()
			if f.now() != tc.want {
				t.Fatalf("percent %d after the suite, want the program's %d", f.now(), tc.want)
			}
		})
	}
}

func TestPercentTheProgramSetsWhileASuiteRunsIsKept(t *testing.T) {
	f := useFakeGC(t)
	s := newStore()
	suite := NewSuite("pace", paceAgent(s), Setup(func(context.Context) error { s = newStore(); return nil }))
	skipWithoutRaise(t)
	if _, err := suite.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	setGCPercent(250) // the program, meanwhile
	suite.Report()
	waitRestored(t, func() bool {
		gcPace.mu.Lock()
		defer gcPace.mu.Unlock()
		return gcPace.set == 0
	})
	if f.now() != 250 {
		t.Fatalf("percent %d after the restore, want the program's 250", f.now())
	}
}

func TestGCPercentForGivesSixteenMegabytesOfHeadroom(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 400}, {1 << 20, 400}, {4 << 20, 400}, {6 << 20, 266}, {8 << 20, 200}, {12 << 20, 133}, {16 << 20, 100}, {64 << 20, 100},
	} {
		if got := gcPercentFor(tc.live); got != tc.want {
			t.Errorf("gcPercentFor(%d MB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}

// TestSuiteRaisesTheRealCollectorsPercent checks the real setting, through
// runtime/metrics, while a suite runs.
func TestSuiteRaisesTheRealCollectorsPercent(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set || os.Getenv("AGENTIDEM_GC") == "default" {
		t.Skip("the environment chose the pacing")
	}
	gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	read := func() uint64 { metrics.Read(gogc); return gogc[0].Value.Uint64() }
	if read() != 100 {
		t.Skipf("GOGC is %d, not the default", read())
	}
	skipWithoutRaise(t)
	s := newStore()
	suite := NewSuite("pace", paceAgent(s), Setup(func(context.Context) error { s = newStore(); return nil }))
	if _, err := suite.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := read(); got <= 100 {
		t.Fatalf("GOGC %d while the suite runs, want it raised", got)
	}
	suite.Report()
	waitRestored(t, func() bool { return read() == 100 })
}
