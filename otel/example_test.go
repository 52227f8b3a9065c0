package agentidemotel_test

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/agentidem/agentidem-go/internal/audit"
	"github.com/agentidem/agentidem-go/internal/benchtool"
	agentidemotel "github.com/agentidem/agentidem-go/otel"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// startTracing is a program's start-up: the usual OpenTelemetry set-up, then
// the one line of agentidem. README.md ("In production") shows the lines
// between BEGIN and END; TestREADMEShowsTheExample keeps them equal.
func startTracing(ctx context.Context, spans io.Writer) (stop func(), err error) {
	// BEGIN README
	exp, err := stdouttrace.New(stdouttrace.WithWriter(spans)) // or your OTLP exporter to a Collector
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	otel.SetTracerProvider(tp)

	uninstall := agentidemotel.Install() // every generated wrapper now starts a span per tool call
	// END README
	return func() { uninstall(); tp.Shutdown(ctx) }, nil
}

// Example runs a tool twice with one identity in production, exports the
// spans with the SDK's stdouttrace exporter and audits the file, as
// agentidem-gen audit does.
func Example() {
	f, err := os.CreateTemp("", "spans-*.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	ctx := context.Background()
	stop, err := startTracing(ctx, f)
	if err != nil {
		fmt.Println(err)
		return
	}
	store := benchtool.NewStore()
	_ = store.PutTraced(ctx, "order-7", 1) // a write with identity=key ...
	_ = store.PutTraced(ctx, "order-7", 1) // ... executed twice
	stop()
	f.Close()

	res, err := audit.Files(audit.Config{}, []string{f.Name()}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, finding := range res.Findings {
		fmt.Println(finding.Code, finding.Ops, finding.Count)
	}
	// Output:
	// duplicate_write [Store.Put] 2
}
