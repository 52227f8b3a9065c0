package runtime

import (
	"context"
	"testing"
)

// BenchmarkSetupCallingTools runs the suite of a three-write agent whose
// Setup seeds the world through a traced tool, five calls per scenario,
// with the context Setup is given. From a suite's first scenario to its
// report the wrappers take their traced path (late.go), so these calls go
// through Begin between runs: the hooks' context tells lookup they are the
// harness's, without the stack reads that attributing a call costs (a
// goroutine id alone is ~10 µs on the deep stack of a test).
func BenchmarkSetupCallingTools(b *testing.B) {
	put := func(string) {}
	agent := putsAgent(put, "a", "b", "c")
	setup := Setup(func(ctx context.Context) error {
		for range 5 {
			if err := tracedPut(ctx, put, "seed"); err != nil {
				return err
			}
		}
		return nil
	})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), "setup-seeds", agent, setup); err != nil {
			b.Fatal(err)
		}
	}
}
