package render

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// ledger is the appending world of testkit's ten-write agent
// (testkit/internal/tools.Ledger, which this package cannot import): a
// repeated post is a second entry, so a crash or a second delivery is
// unsafe.
type ledger struct {
	mu      sync.Mutex
	entries []string
}

var opPost = runtime.Declare(&runtime.Op{
	Kind:   runtime.KindWrite,
	Name:   "post",
	Params: []string{"key", "entry"},
	Pkg:    "github.com/agentidem/agentidem-go/internal/render",
	Pos:    "tenwrite_test.go:21",
})

// postTraced is what agentidem-gen writes for a //agentidem:write
// identity=key method.
func (l *ledger) postTraced(ctx context.Context, key, entry string) (err error) {
	c, ctx := runtime.BeginArgs(ctx, opPost, []runtime.Arg{runtime.Str(key), runtime.Str(entry)}, runtime.Span(0, 1), runtime.ArgSpan{})
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	_ = ctx
	l.mu.Lock()
	l.entries = append(l.entries, entry)
	l.mu.Unlock()
	if lost := c.Finish(nil); lost != nil {
		return lost
	}
	return nil
}

// tenWriteReport is the report of testkit's ten-write agent (43
// scenarios, its crashes and second deliveries unsafe), the suite whose
// summary BenchmarkTextTenWrite renders.
func tenWriteReport(tb testing.TB) *runtime.Report {
	tb.Helper()
	var l *ledger
	rep, err := runtime.Run(context.Background(), "ten", func(ctx context.Context) error {
		for i := range 10 {
			if err := l.postTraced(ctx, fmt.Sprintf("entry-%d", i), "x"); err != nil {
				return err
			}
		}
		return nil
	}, runtime.Setup(func(context.Context) error { l = &ledger{}; return nil }))
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// BenchmarkTextTenWrite renders the ten-write agent's summary as testkit
// prints it for a failing TestAgent (testSummary: findings and problems
// left out, plain OK scenarios folded), and in full.
func BenchmarkTextTenWrite(b *testing.B) {
	rep := tenWriteReport(b)
	brief := *rep
	brief.Findings, brief.Problems = nil, nil
	b.Run("testkit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Text(&brief, FoldPlainOK())
		}
	})
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Text(rep)
		}
	})
}
