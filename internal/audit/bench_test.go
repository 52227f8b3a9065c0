package audit

import (
	"bytes"
	"fmt"
	"testing"
)

// benchInput is n spans in traces of four tool calls, as the Collector's file
// exporter writes them (100 spans per line).
func benchInput(n int) []byte {
	var b bytes.Buffer
	var batch []sp
	for i := 0; len(batch) > 0 || i < n; {
		if i < n {
			tr := fmt.Sprint("t", i/4)
			id := fmt.Sprint("hmac-sha256:", i)
			s := sp{trace: tr, span: fmt.Sprint("s", i), parent: "agent", op: "refund", kind: "write", id: id, entity: id, args: "a", site: "agent.go:1", status: "success", start: i, end: i + 1}
			if i%4 == 3 {
				s.op, s.kind, s.after = "getOrder", "read", nil
			}
			batch = append(batch, s)
			i++
		}
		if len(batch) == 100 || i == n {
			b.WriteString(otlp(batch...))
			b.WriteByte('\n')
			batch = batch[:0]
		}
	}
	return b.Bytes()
}

// BenchmarkAudit reads and audits 10,000 spans per op; it reports spans/s
// and the input rate (MB/s). scripts/bench/audit.sh prints it with the peak
// memory of a 1,000,000-span audit.
func BenchmarkAudit(b *testing.B) {
	const n = 10000
	in := benchInput(n)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := New(Config{})
		var st Stats
		if err := Read("bench", bytes.NewReader(in), &st, func(s *Span) error { a.Add(s); return nil }); err != nil {
			b.Fatal(err)
		}
		if st.Ours != n {
			b.Fatalf("read %d spans, want %d", st.Ours, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}
