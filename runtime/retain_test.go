package runtime

import (
	"context"
	goruntime "runtime"
	"testing"
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
