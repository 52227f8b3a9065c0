package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"testing"
)

// tenWriteReport is the report of an agent that makes ten writes, the
// size of report testkit writes per test with AGENTIDEM_REPORT_DIR.
func tenWriteReport(tb testing.TB) *Report {
	s := newStore()
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	rep, err := Run(context.Background(), "ten", func(ctx context.Context) error {
		for _, k := range keys {
			if err := s.putTraced(ctx, k, 1); err != nil {
				return err
			}
		}
		return nil
	}, Setup(func(context.Context) error { s = newStore(); return nil }))
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// BenchmarkReportWriteJSON writes the ten-write agent's report (43
// scenarios) as testkit does.
func BenchmarkReportWriteJSON(b *testing.B) {
	rep := tenWriteReport(b)
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := rep.WriteJSON(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReportWriteJSONCold is BenchmarkReportWriteJSON without a
// pooled buffer: each write allocates one, as the first write of a process
// (or the first after the pool was collected) does.
func BenchmarkReportWriteJSONCold(b *testing.B) {
	rep := tenWriteReport(b)
	b.ReportAllocs()
	for b.Loop() {
		reportBuffer.Store(nil)
		if err := rep.WriteJSON(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTraceJSONHasTraceFields guards traceJSON, which lists Trace's fields
// by hand: a field added to Trace must be added there too, in order.
func TestTraceJSONHasTraceFields(t *testing.T) {
	tags := func(typ reflect.Type) []string {
		var out []string
		for i := range typ.NumField() {
			if tag := typ.Field(i).Tag.Get("json"); tag != "" {
				out = append(out, tag)
			}
		}
		return out
	}
	got, want := tags(reflect.TypeFor[traceJSON]()), tags(reflect.TypeFor[Trace]())
	if !slices.Equal(got, want) {
		t.Fatalf("traceJSON fields %v, Trace fields %v: keep them equal", got, want)
	}
}

// TestReportJSONOnePass checks that the one-pass encoding of a report
// writes what each part's own MarshalJSON writes.
func TestReportJSONOnePass(t *testing.T) {
	rep := tenWriteReport(t)
	var whole bytes.Buffer
	if err := rep.WriteJSON(&whole); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(whole.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != len(rep.Results) {
		t.Fatalf("%d results written, want %d", len(back.Results), len(rep.Results))
	}
	for i, res := range rep.Results {
		alone, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var a, b bytes.Buffer
		if err := json.Compact(&a, alone); err != nil {
			t.Fatal(err)
		}
		if err := json.Compact(&b, back.Results[i]); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Fatalf("result %d in the report:\n%s\nalone:\n%s", i, b.String(), a.String())
		}
	}
}
