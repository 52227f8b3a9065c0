package testkit_test

import (
	"context"
	"fmt"
	"runtime/metrics"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// BenchmarkSuite runs the whole fault suite of an agent that makes W
// writes (one read first), with a fresh world per scenario. It reports
// scenarios/s and agent runs per suite next to the 2W+3 runs of the
// AgentIdem Python SDK's design.
func BenchmarkSuite(b *testing.B) {
	for _, w := range []int{1, 10} {
		b.Run(fmt.Sprintf("writes=%d", w), func(b *testing.B) {
			keys := make([]string, w)
			for i := range keys {
				keys[i] = fmt.Sprintf("entry-%d", i)
			}
			var l *tools.Ledger
			agent := func(ctx context.Context) error {
				if _, err := l.CountTraced(ctx); err != nil {
					return err
				}
				for _, k := range keys {
					if err := l.PostTraced(ctx, k, "x"); err != nil {
						return err
					}
				}
				return nil
			}
			setup := runtime.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil })
			var rep *runtime.Report
			created := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
			metrics.Read(created)
			before := created[0].Value.Uint64()
			b.ReportAllocs()
			for b.Loop() {
				var err error
				rep, err = runtime.Run(context.Background(), "bench", agent, setup)
				if err != nil {
					b.Fatal(err)
				}
			}
			metrics.Read(created)
			scenarios := float64(rep.FaultCount + 1)
			// The goroutines a suite starts (each Setup's, each
			// invocation's): each is a start and a wait, which
			// BenchmarkGoroutineHandoff prices.
			b.ReportMetric(float64(created[0].Value.Uint64()-before)/float64(b.N), "goroutines/suite")
			b.ReportMetric(scenarios, "scenarios/suite")
			b.ReportMetric(float64(rep.AgentRuns), "agent-runs/suite")
			b.ReportMetric(float64(2*w+3), "python-sdk-runs/suite")
			b.ReportMetric(scenarios*float64(b.N)/b.Elapsed().Seconds(), "scenarios/s")
		})
	}
}

// BenchmarkGoroutineHandoff prices what the harness pays per goroutine it
// starts and waits for (a Setup's, an invocation's), apart from the work:
// the same few microseconds of work done inline, and in a goroutine the
// caller starts and then waits for. The difference is the Go runtime's
// (with GOMAXPROCS above 1, mostly the wake-up of an idle processor's
// thread, a system call, at each start and each wake of the waiter), and
// BenchmarkSuite's goroutines/suite times it is the least a suite pays for
// them.
func BenchmarkGoroutineHandoff(b *testing.B) {
	work := func() int {
		x := 0
		for i := range 4000 {
			x += i ^ (x >> 3)
		}
		return x
	}
	var sink int
	b.Run("inline", func(b *testing.B) {
		for b.Loop() {
			sink += work()
			sink += work()
		}
	})
	b.Run("goroutine", func(b *testing.B) {
		for b.Loop() {
			sink += work()
			done := make(chan int)
			go func() { done <- work() }()
			sink += <-done
		}
	})
	// Two pieces of work the size of half a ten-write report's encoding
	// (about 70 us each) one after the other, and at once, one of them in a
	// goroutine: what a second processor gives the harness's own work at
	// that grain. On a virtual machine of 2 CPUs here, the second took so
	// long to wake that the pieces at once finished later than in sequence
	// (146 to 151 us against 136 with GOMAXPROCS=2; at 100 times the work,
	// at once was 1.9 times as fast): the harness does its work in one
	// goroutine.
	half := func() int {
		x := 0
		for range 24 {
			x += work()
		}
		return x
	}
	b.Run("sequence", func(b *testing.B) {
		for b.Loop() {
			sink += half()
			sink += half()
		}
	})
	b.Run("at-once", func(b *testing.B) {
		for b.Loop() {
			done := make(chan int)
			go func() { done <- half() }()
			sink += half()
			sink += <-done
		}
	})
	if sink == 1 {
		b.Log(sink) // keeps the work
	}
}
