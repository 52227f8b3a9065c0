package testkit_test

import (
	"context"
	"fmt"
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
			b.ReportAllocs()
			for b.Loop() {
				var err error
				rep, err = runtime.Run(context.Background(), "bench", agent, setup)
				if err != nil {
					b.Fatal(err)
				}
			}
			scenarios := float64(rep.FaultCount + 1)
			b.ReportMetric(scenarios, "scenarios/suite")
			b.ReportMetric(float64(rep.AgentRuns), "agent-runs/suite")
			b.ReportMetric(float64(2*w+3), "python-sdk-runs/suite")
			b.ReportMetric(scenarios*float64(b.N)/b.Elapsed().Seconds(), "scenarios/s")
		})
	}
}
