package testkit

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// BenchmarkSummary renders the summary go test prints for a failing suite
// of the ten-write agent (43 scenarios, 12 unsafe), as TestAgent does under
// plain go test.
func BenchmarkSummary(b *testing.B) {
	var l *tools.Ledger
	rep, err := runtime.Run(context.Background(), "TestTenWrites", func(ctx context.Context) error {
		if _, err := l.CountTraced(ctx); err != nil {
			return err
		}
		for i := range 10 {
			if err := l.PostTraced(ctx, fmt.Sprintf("entry-%d", i), "x"); err != nil {
				return err
			}
		}
		return nil
	}, runtime.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil }))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = testSummary(rep, true)
	}
}
