package shop

import (
	"context"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// BenchmarkHTTPSuite is the whole suite (runtime.Run: baseline, faults,
// interleavings, partial batch failures) of the keyed shop agent, whose
// tools call an HTTP service: two quotes in parallel, then the order. It
// is the cost of a suite for an agent as real ones are, next to the
// in-memory agents of testkit's BenchmarkSuite (scripts/bench/suite.sh).
func BenchmarkHTTPSuite(b *testing.B) {
	for name, mk := range clients(b) {
		b.Run(name, func(b *testing.B) {
			svc, c := mk(b)
			agent := buy(&Agent{Tools: c, Retries: 2, Keyed: true})
			setup := runtime.Setup(func(context.Context) error { svc.Reset(); return nil })
			var rep *runtime.Report
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if rep, err = runtime.Run(context.Background(), "shop", agent, setup); err != nil {
					b.Fatal(err)
				}
			}
			if !rep.Safe {
				b.Fatalf("the keyed agent is not safe: %d unsafe", rep.UnsafeCount)
			}
			scenarios := float64(len(rep.Results) + 1)
			b.ReportMetric(scenarios, "scenarios/suite")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/scenarios, "us/scenario")
		})
	}
}
