package agentidemotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	agentidemotel "github.com/agentidem/agentidem-go/otel"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The wrappers below have the shape agentidem-gen emits.

var opCharge = &runtime.Op{Name: "charge", Kind: runtime.KindWrite, Params: []string{"card", "order"}, After: []string{"quote"}, RedactIdentity: true}

func chargeTraced(ctx context.Context, card, order string, fail bool) (aiErr error) {
	if !runtime.Enabled() {
		return nil
	}
	aiCall, aiCtx := runtime.Begin(ctx, opCharge, []any{runtime.Redacted, order}, []any{card, order}, []any{order})
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	if !trace.SpanContextFromContext(aiCtx).IsValid() {
		aiErr = errors.New("the tool's context carries no span")
	} else if fail {
		aiErr = errors.New("card " + card + " declined")
	}
	if aiLost := aiCall.Finish(aiErr); aiLost != nil {
		return aiLost
	}
	return
}

var opSet = &runtime.Op{Name: "setStatus", Kind: runtime.KindWrite, Params: []string{"id"}, Idempotent: true}

func setTraced(id string) {
	if !runtime.Enabled() {
		return
	}
	aiCall, _ := runtime.Begin(nil, opSet, []any{id}, []any{id}, nil)
	_ = aiCall.Start()
	defer aiCall.Recover(nil)
	_ = aiCall.Finish(nil)
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestSpansCarryTheCall(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	uninstall := agentidemotel.Install(agentidemotel.WithTracerProvider(tp), agentidemotel.WithIdentityKey([]byte("a key of sixteen")))

	ctx, parent := tp.Tracer("agent").Start(context.Background(), "agent")
	require.NoError(t, chargeTraced(ctx, "4242-4242", "o1", false))
	require.Error(t, chargeTraced(ctx, "4242-4242", "o1", true))
	setTraced("s1")
	parent.End()
	uninstall()
	require.NoError(t, chargeTraced(ctx, "4242-4242", "o2", false))

	spans := exp.GetSpans().Snapshots()
	require.Len(t, spans, 4, "two charges, one set, the agent; none after uninstall")
	ok, failed, set := spans[0], spans[1], spans[2]

	a := attrs(ok)
	assert.Equal(t, "charge", ok.Name())
	assert.Equal(t, parent.SpanContext().SpanID(), ok.Parent().SpanID(), "a child of the span in the tool's context")
	assert.Equal(t, "charge", a[agentidemotel.AttrOp].AsString())
	assert.Equal(t, "write", a[agentidemotel.AttrKind].AsString())
	assert.True(t, strings.HasPrefix(a[agentidemotel.AttrIdentity].AsString(), "hmac-sha256:"))
	assert.NotEqual(t, a[agentidemotel.AttrIdentity], a[agentidemotel.AttrEntity], "entity= is digested apart")
	assert.NotEmpty(t, a[agentidemotel.AttrArgs].AsString())
	assert.Len(t, a[agentidemotel.AttrKeyID].AsString(), 16)
	assert.Equal(t, []string{"quote"}, a[agentidemotel.AttrAfter].AsStringSlice())
	assert.Contains(t, a[agentidemotel.AttrSite].AsString(), "otel_test.go:")
	assert.Equal(t, "success", a[agentidemotel.AttrStatus].AsString())
	assert.False(t, a[agentidemotel.AttrReplayed].AsBool())
	assert.Equal(t, codes.Unset, ok.Status().Code)

	b := attrs(failed)
	assert.Equal(t, "failed", b[agentidemotel.AttrStatus].AsString())
	assert.Equal(t, codes.Error, failed.Status().Code)
	assert.Equal(t, a[agentidemotel.AttrIdentity], b[agentidemotel.AttrIdentity], "one identity, one digest")
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			assert.NotContains(t, kv.Value.Emit(), "4242-4242", "a redacted value never reaches a span")
		}
		assert.NotContains(t, s.Status().Description, "4242-4242", "nor the error text of an op that redacts")
	}

	c := attrs(set)
	assert.True(t, c[agentidemotel.AttrIdempotent].AsBool())
	assert.False(t, set.Parent().IsValid(), "a tool without a context starts a root span")
}

func TestKeyFromEnv(t *testing.T) {
	t.Setenv(agentidemotel.KeyEnv, "")
	assert.Nil(t, agentidemotel.KeyFromEnv())
	t.Setenv(agentidemotel.KeyEnv, "00ff")
	assert.Equal(t, []byte{0, 0xff}, agentidemotel.KeyFromEnv())
	t.Setenv(agentidemotel.KeyEnv, "not hex: a passphrase")
	assert.Equal(t, []byte("not hex: a passphrase"), agentidemotel.KeyFromEnv())
}

func TestEnvKeyMakesDigestsComparable(t *testing.T) {
	digest := func() string {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		defer tp.Shutdown(context.Background())
		defer agentidemotel.Install(agentidemotel.WithTracerProvider(tp))()
		setTraced("s1")
		return attrs(exp.GetSpans().Snapshots()[0])[agentidemotel.AttrIdentity].AsString()
	}
	t.Setenv(agentidemotel.KeyEnv, "")
	assert.NotEqual(t, digest(), digest(), "no key: one per process (here per Install)")
	t.Setenv(agentidemotel.KeyEnv, "shared by every replica")
	assert.Equal(t, digest(), digest(), "the same key: the same digest, across restarts")
}

// An op that redacts a parameter its identity does not use: the wrapper
// hands the card to Call.Redact, and the span's status must not quote it
// (it did: only a redacted identity withheld the error text).
var opPay = &runtime.Op{Name: "pay", Kind: runtime.KindWrite, Params: []string{"card", "order"}}

func payTraced(ctx context.Context, card, order string) (aiErr error) {
	if !runtime.Enabled() {
		return nil
	}
	aiCall, _ := runtime.Begin(ctx, opPay, []any{runtime.Redacted, order}, []any{order}, nil)
	aiCall.Redact(card)
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	aiErr = errors.New("card " + card + " declined")
	if aiLost := aiCall.Finish(aiErr); aiLost != nil {
		return aiLost
	}
	return
}

func TestErrorTextOfARedactingOpIsWithheld(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	uninstall := agentidemotel.Install(agentidemotel.WithTracerProvider(tp))
	require.Error(t, payTraced(context.Background(), "4242-4242-4242-4242", "o1"))
	uninstall()
	spans := exp.GetSpans().Snapshots()
	require.Len(t, spans, 1)
	st := spans[0].Status()
	assert.Equal(t, codes.Error, st.Code)
	assert.NotContains(t, st.Description, "4242", "the span's status quotes the redacted card")
	assert.Contains(t, st.Description, "text withheld")
}
