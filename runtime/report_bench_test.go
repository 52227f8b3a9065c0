package runtime_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/runtime"
)

// benchReport is the report of the naive refund agent's suite.
func benchReport(b *testing.B) *runtime.Report {
	b.Helper()
	var bank *refund.Bank
	rep, err := runtime.Run(context.Background(), "naive_agent", func(ctx context.Context) error {
		_, err := (&refund.NaiveAgent{Bank: bank}).Run(ctx, "payment-123")
		return err
	}, runtime.Setup(func(context.Context) error { bank = refund.NewBank(100, "payment-123"); return nil }))
	if err != nil {
		b.Fatal(err)
	}
	return rep
}

// BenchmarkReportWriteJSON measures writing a report (scripts/bench prints
// the comparison; the figures are per report of 6 scenarios).
func BenchmarkReportWriteJSON(b *testing.B) {
	rep := benchReport(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := rep.WriteJSON(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReportReadJSON measures decoding a written report.
func BenchmarkReportReadJSON(b *testing.B) {
	rep := benchReport(b)
	raw, err := json.Marshal(rep)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var r runtime.Report
		if err := json.Unmarshal(raw, &r); err != nil {
			b.Fatal(err)
		}
	}
}
