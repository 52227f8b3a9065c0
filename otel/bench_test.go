package agentidemotel_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/agentidem/agentidem-go/internal/benchtool"
	agentidemotel "github.com/agentidem/agentidem-go/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The benchmarks compare, on internal/benchtool's Store.Put (a map insert
// under a mutex), a direct call, the call inside a span started by hand
// (what an instrumented tool pays anyway), and the generated wrapper with the
// observer installed. The tracer provider records every span and exports
// none, so the figures are the instrumentation's cost, not an exporter's.
// scripts/bench/otel.sh prints the table.

var keys = func() []string {
	k := make([]string, 1024)
	for i := range k {
		k[i] = "key-" + strconv.Itoa(i)
	}
	return k
}()

func BenchmarkOTelDirect(b *testing.B) {
	s := benchtool.NewStore()
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := s.Put(ctx, keys[i&1023], i); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOTelHandSpan starts the span a tool would start by hand: its
// name, two attributes, the error status, End.
func BenchmarkOTelHandSpan(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	tracer := tp.Tracer("bench")
	s := benchtool.NewStore()
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sctx, span := tracer.Start(ctx, "Store.Put", trace.WithAttributes(attribute.String("op", "Store.Put"), attribute.String("kind", "write")))
		err := s.Put(sctx, keys[i&1023], i)
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOTelObserved calls the generated wrapper with the observer
// installed: span, keyed digests of identity, entity and arguments, call
// site, status.
func BenchmarkOTelObserved(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	defer agentidemotel.Install(agentidemotel.WithTracerProvider(tp), agentidemotel.WithIdentityKey([]byte("bench key, 16 bytes+")))()
	s := benchtool.NewStore()
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := s.PutTraced(ctx, keys[i&1023], i); err != nil {
			b.Fatal(err)
		}
	}
}
