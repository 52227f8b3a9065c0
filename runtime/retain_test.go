package runtime

import (
	"context"
	goruntime "runtime"
	"testing"
	"time"
	"weak"
)

// TestSuiteIsCollected: a suite, its results and traces are garbage once
// the caller drops them. The redacted values of a suite were kept in a
// process-wide map keyed by the suite, which held every suite of a test
// binary (and each of its traces) until the process exited.
func TestSuiteIsCollected(t *testing.T) {
	wp := func() weak.Pointer[Suite] {
		s := NewSuite("retain", func(ctx context.Context) error {
			return loginTraced(ctx, "ada", "hunter22")
		})
		if _, err := s.Baseline(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, sc := range s.Plan() {
			if _, err := s.RunScenario(context.Background(), sc); err != nil {
				t.Fatal(err)
			}
		}
		if rep := s.Report(); len(rep.Results) == 0 {
			t.Fatal("the suite ran no scenario")
		}
		return weak.Make(s)
	}()
	for i := 0; i < 5 && wp.Value() != nil; i++ {
		goruntime.GC()
	}
	if wp.Value() != nil {
		t.Fatal("the suite is still reachable after its last use: something in the process keeps it (and its traces)")
	}
}

// endSuite assembles s's report when the test ends, which ends the suite's
// watch for late calls (late.go): the wrappers of later tests then take
// their inactive path again.
func endSuite(t *testing.T, s *Suite) {
	t.Cleanup(func() { s.Report() })
}

// A suite dropped without its report stops watching for late calls when it
// is collected: the wrappers go back to their inactive path.
func TestUnreportedSuiteStopsWatching(t *testing.T) {
	before := activeRuns.Load()
	var run uint64
	func() {
		s := NewSuite("unreported", func(ctx context.Context) error {
			return loginTraced(ctx, "ada", "hunter22")
		})
		if _, err := s.Baseline(context.Background()); err != nil {
			t.Fatal(err)
		}
		if activeRuns.Load() != before+1 {
			t.Fatalf("active %d after the baseline, want %d: the suite watches until its report", activeRuns.Load(), before+1)
		}
		run = s.watch.runs[0]
	}()
	deadline := time.Now().Add(5 * time.Second)
	for activeRuns.Load() != before && time.Now().Before(deadline) {
		goruntime.GC()
		time.Sleep(time.Millisecond) // cleanups run in a goroutine of their own
	}
	if n := activeRuns.Load(); n != before {
		t.Errorf("active %d after the suite was collected, want %d", n, before)
	}
	// Its runs left the registry of late counts with it: a process that
	// drops suites unreported (a benchmark's loop) does not grow it.
	if l := lateRuns.get(run); l != reported {
		t.Errorf("the collected suite's baseline still has its late count registered")
	}
}
