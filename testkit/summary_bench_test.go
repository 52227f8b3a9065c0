package testkit

import "testing"

// BenchmarkSummary renders the summary go test prints for a failing suite
// of the ten-write agent (tenWriteReport: its scenarios with a crash or a
// second delivery are unsafe), as TestAgent does under plain go test.
func BenchmarkSummary(b *testing.B) {
	rep := tenWriteReport(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = testSummary(rep, true, nil)
	}
}
