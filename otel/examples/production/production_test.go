package production

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/internal/audit"
	"github.com/agentidem/agentidem-go/internal/reportschema"
	agentidemotel "github.com/agentidem/agentidem-go/otel"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// attemptTimeout is the client's deadline per attempt. The provider's first
// answer comes only when the client gave up, so the first attempt always
// times out, for real, over HTTP.
const attemptTimeout = 300 * time.Millisecond

// process is one run of the agent's program: a tracer provider exporting to
// a file with the SDK's stdouttrace exporter, and the observer installed
// with one line, as in the README.
type process struct {
	path string
	file *os.File
	tp   *sdktrace.TracerProvider
	stop func()
}

func start(t *testing.T, key []byte) *process {
	t.Helper()
	p := &process{path: filepath.Join(t.TempDir(), "spans.jsonl")}
	var err error
	p.file, err = os.Create(p.path)
	require.NoError(t, err)
	exp, err := stdouttrace.New(stdouttrace.WithWriter(p.file))
	require.NoError(t, err)
	p.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	otel.SetTracerProvider(p.tp)
	p.stop = agentidemotel.Install(agentidemotel.WithIdentityKey(key))
	return p
}

// exit flushes the spans and closes the file, as a program's shutdown does.
func (p *process) exit(t *testing.T) string {
	t.Helper()
	p.stop()
	require.NoError(t, p.tp.Shutdown(context.Background()))
	require.NoError(t, p.file.Close())
	return p.path
}

func provider(t *testing.T, ledger *Ledger, ackDelay time.Duration) *Payments {
	srv := httptest.NewServer(ledger.Handler(ackDelay))
	t.Cleanup(srv.Close)
	return &Payments{URL: srv.URL, HTTP: srv.Client()}
}

var key = []byte("0123456789abcdef0123456789abcdef")

func TestRetryingAgentDuplicateIsFoundInExportedSpans(t *testing.T) {
	ledger := NewLedger()
	p := start(t, key)
	_, err := RetryingAgent(provider(t, ledger, 10*time.Second), attemptTimeout).Run(context.Background(), "order-7", 500)
	require.NoError(t, err, "the retry succeeded, so the agent believes it refunded once")
	path := p.exit(t)
	require.Len(t, ledger.Refunds(), 2, "the provider booked the refund twice: the first answer was lost")

	res, err := audit.Files(audit.Config{}, []string{path}, nil)
	require.NoError(t, err)
	assert.Zero(t, res.Stats.Bad, "%v", res.Stats.Problems)
	require.Len(t, res.Findings, 1, "%+v", res.Findings)
	f := res.Findings[0]
	assert.Equal(t, runtime.CodeDuplicateWrite, f.Code)
	assert.Equal(t, []string{"ledger.refund"}, f.Ops)
	require.Len(t, f.Spans, 2)
	assert.Equal(t, f.Spans[0].TraceID, f.Spans[1].TraceID, "one agent run: the trace context went over HTTP")
	assert.True(t, f.Spans[0].Start.Before(f.Spans[1].Start))
	assert.False(t, res.Safe())

	// The agent's own spans: the first attempt failed with the client's
	// deadline, the retry succeeded.
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), "context deadline exceeded")
	assert.Equal(t, strings.Count(string(b), "order-7"), strings.Count(string(b), `"Description":"refund order-7: `),
		"the order id is only in the tool's own error text: identities leave the process as keyed digests")

	rep := res.Report("audit", "agentidem-gen audit "+path, time.Now(), 0)
	require.NoError(t, reportschema.Validate(rep))
}

func TestKeyedAgentAuditsClean(t *testing.T) {
	ledger := NewLedger()
	p := start(t, key)
	_, err := KeyedAgent(provider(t, ledger, 10*time.Second), attemptTimeout).Run(context.Background(), "order-7", 500)
	require.NoError(t, err)
	path := p.exit(t)
	require.Len(t, ledger.Refunds(), 1)

	res, err := audit.Files(audit.Config{}, []string{path}, nil)
	require.NoError(t, err)
	assert.Empty(t, res.Findings)
	assert.True(t, res.Safe())
	assert.Equal(t, 4, res.Stats.Ours, "two attempts of refund, two of ledger.refund (the second replayed)")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(b), `"Key":"agentidem.replayed","Value":{"Type":"BOOL","Value":true}`))
}

// TestKeyAcrossRestarts delivers the same job twice, to two runs of the
// program (a redelivery after a restart). With the same identity key the
// audit matches the two refunds; with a random key per process it cannot,
// and says why.
func TestKeyAcrossRestarts(t *testing.T) {
	run := func(ledger *Ledger, k []byte) string {
		p := start(t, k)
		_, err := KeyedAgent(provider(t, ledger, 0), 5*time.Second).Run(context.Background(), "order-9", 100)
		require.NoError(t, err)
		return p.exit(t)
	}
	// The keyed agent's key is per order, but each run gets a fresh
	// provider: as if the provider forgot its keys (a key that expired).
	l1, l2 := NewLedger(), NewLedger()
	before, after := run(l1, key), run(l2, key)
	res, err := audit.Files(audit.Config{}, []string{before, after}, nil)
	require.NoError(t, err)
	require.Len(t, res.Findings, 2, "refund and ledger.refund, each done once per run")
	assert.Equal(t, runtime.CodeDuplicateWrite, res.Findings[0].Code)
	assert.NotEqual(t, res.Findings[0].Spans[0].TraceID, res.Findings[0].Spans[1].TraceID)

	before, after = run(NewLedger(), nil), run(NewLedger(), nil)
	res, err = audit.Files(audit.Config{}, []string{before, after}, nil)
	require.NoError(t, err)
	assert.Empty(t, res.Findings, "digests under two random keys never match")
	assert.Contains(t, strings.Join(res.Notes(), "\n"), "the spans carry 2 digest keys")
}

func TestAuditOfNothingIsNotClean(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"Name":"GET /","SpanContext":{"TraceID":"0af7651916cd43dd8448eb211c80319c","SpanID":"b7ad6b7169203331"}}`+"\n"), 0o644))
	res, err := audit.Files(audit.Config{}, []string{path}, nil)
	assert.True(t, errors.Is(err, audit.ErrNoSpans))
	assert.False(t, res.Safe())
	assert.Equal(t, 1, res.Stats.Foreign)
}

func auditOf(t *testing.T, path string) *audit.Result {
	t.Helper()
	res, err := audit.Files(audit.Config{}, []string{path}, nil)
	require.NoError(t, err)
	assert.Zero(t, res.Stats.Bad, "%v", res.Stats.Problems)
	return res
}

func TestFreshKeyPerAttemptIsIdentityUnstable(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  KeyPerAttempt
		want string
	}{
		{"fresh key per attempt", FreshKey, runtime.CodeIdentityUnstable},
		{"key from the work", WorkKey, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ledger := NewLedger()
			p := start(t, key)
			require.NoError(t, RunKeyed(context.Background(), provider(t, ledger, 10*time.Second), attemptTimeout, tc.key, "order-7", 500))
			res := auditOf(t, p.exit(t))
			var got []string
			for _, f := range res.Findings {
				if f.Code == runtime.CodeIdentityUnstable {
					assert.Equal(t, []string{"refund.keyed"}, f.Ops)
					assert.Contains(t, f.Message, "(more.go:", "names the call site")
				}
				got = append(got, f.Code+" "+strings.Join(f.Ops, ","))
			}
			if tc.want == "" {
				assert.Empty(t, got)
			} else {
				// The provider booked two refunds too, seen on its side.
				assert.ElementsMatch(t, []string{tc.want + " refund.keyed", "duplicate_write ledger.refund"}, got)
			}
		})
	}
}

func TestParallelDependentCallsAreFound(t *testing.T) {
	for _, parallel := range []bool{true, false} {
		t.Run(map[bool]string{true: "parallel", false: "in order"}[parallel], func(t *testing.T) {
			p := start(t, key)
			_ = Bill(context.Background(), NewInvoices(20*time.Millisecond), "order-7", parallel)
			res := auditOf(t, p.exit(t))
			if !parallel {
				assert.Empty(t, res.Findings)
				return
			}
			require.Len(t, res.Findings, 1, "%+v", res.Findings)
			assert.Equal(t, runtime.CodeDependentCallsConcurrent, res.Findings[0].Code)
			assert.Equal(t, []string{"invoice.create", "invoice.attach"}, res.Findings[0].Ops)
		})
	}
}
