package agentidemotel

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/agentidem/agentidem-go/runtime"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans, the name the tracer
// is asked for.
const ScopeName = "github.com/agentidem/agentidem-go/otel"

// KeyEnv is the environment variable Install reads the identity digest key
// from when WithIdentityKey is not given: a secret of at least 16 bytes,
// written as hex (64 digits for 32 bytes) or as plain text.
const KeyEnv = "AGENTIDEM_IDENTITY_KEY"

// The span attributes, all under the agentidem. namespace. Identity, entity
// and arguments are keyed HMAC-SHA256 digests, never values.
const (
	// AttrOp is the op name (the span's name too).
	AttrOp = attribute.Key("agentidem.op")
	// AttrKind is "read" or "write".
	AttrKind = attribute.Key("agentidem.kind")
	// AttrIdentity is the keyed digest of a write's logical identity.
	AttrIdentity = attribute.Key("agentidem.identity.digest")
	// AttrIdentityError says why the identity could not be computed.
	AttrIdentityError = attribute.Key("agentidem.identity.error")
	// AttrEntity is the keyed digest of what the op touches, when it is
	// not the identity (a write without entity=).
	AttrEntity = attribute.Key("agentidem.entity.digest")
	// AttrArgs is the keyed digest of a write's arguments other than its
	// identity: equal for two attempts of the same work. Written for
	// writes with an entity= of their own or declared idempotent.
	AttrArgs = attribute.Key("agentidem.args.digest")
	// AttrKeyID names the digest key (digests compare only under one key).
	AttrKeyID = attribute.Key("agentidem.key_id")
	// AttrAfter lists the ops this one must follow (its after=).
	AttrAfter = attribute.Key("agentidem.after")
	// AttrIdempotent says the op is declared idempotent (a repeat with
	// the same arguments has no further effect: absorbed, not a duplicate).
	AttrIdempotent = attribute.Key("agentidem.idempotent")
	// AttrSite is the call site, file:line of the agent's call.
	AttrSite = attribute.Key("agentidem.site")
	// AttrStatus is "success" or "failed".
	AttrStatus = attribute.Key("agentidem.status")
	// AttrReplayed is true when the sink answered from a stored result
	// (runtime.MarkReplayed): not a second effect. Absent otherwise.
	AttrReplayed = attribute.Key("agentidem.replayed")
)

// Option configures Install.
type Option interface{ apply(*config) }

type config struct {
	tp  trace.TracerProvider
	key []byte
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithTracerProvider sets the provider of the tracer; the default is the
// global one (otel.GetTracerProvider) at the time of Install.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tp = tp })
}

// WithIdentityKey sets the secret that keys the identity digests. Give the
// same key to every process whose spans are audited together, and keep it
// across restarts: digests made under different keys never match. Without
// it, Install reads $AGENTIDEM_IDENTITY_KEY, and without that it draws a
// random key for this process.
func WithIdentityKey(key []byte) Option {
	return optionFunc(func(c *config) { c.key = append([]byte(nil), key...) })
}

// Install makes every generated wrapper of the process, outside test runs,
// start a span per tool call, and returns a function that removes it. Call
// it once at start-up, after the tracer provider is set up:
//
//	defer agentidemotel.Install()()
//
// Without an identity key (WithIdentityKey or $AGENTIDEM_IDENTITY_KEY) the
// digests are keyed by a random key of this process: they reveal nothing and
// match only within the process, so an audit then cannot match a retry made
// by another process or after a restart.
func Install(opts ...Option) (uninstall func()) {
	var c config
	for _, o := range opts {
		o.apply(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.key == nil {
		c.key = KeyFromEnv()
	}
	o := &Observer{tracer: c.tp.Tracer(ScopeName)}
	return runtime.SetObserver(o, c.key)
}

// KeyFromEnv returns the key in $AGENTIDEM_IDENTITY_KEY (hex-decoded when it
// is hex), or nil when it is unset or empty.
func KeyFromEnv() []byte {
	s := strings.TrimSpace(os.Getenv(KeyEnv))
	if s == "" {
		return nil
	}
	if b, err := hex.DecodeString(s); err == nil && len(b) > 0 {
		return b
	}
	return []byte(s)
}

// Observer is the runtime.Observer that turns calls into spans. Install
// sets it up; it is exported for programs that call runtime.SetObserver
// themselves.
type Observer struct {
	tracer trace.Tracer
}

// NewObserver returns an observer whose spans come from tracer.
func NewObserver(tracer trace.Tracer) *Observer { return &Observer{tracer: tracer} }

// StartCall starts the call's span, child of the span in ctx. The
// attributes are set when the call ends, in one step (the cheapest for the
// SDK); samplers see the span's name, which is the op name.
func (o *Observer) StartCall(ctx context.Context, c *runtime.ObservedCall) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, _ = o.tracer.Start(ctx, c.Op.Name, spanKind)
	return ctx
}

var spanKind = trace.WithSpanKind(trace.SpanKindInternal)

// EndCall sets the call's attributes and outcome on its span and ends it.
func (o *Observer) EndCall(ctx context.Context, c *runtime.ObservedCall) {
	if ctx == nil {
		return
	}
	span := trace.SpanFromContext(ctx)
	attrs := make([]attribute.KeyValue, 0, 13)
	attrs = append(attrs, AttrOp.String(c.Op.Name), AttrKind.String(c.Op.Kind.String()), AttrKeyID.String(c.KeyID))
	if c.Identity != "" {
		attrs = append(attrs, AttrIdentity.String(c.Identity))
	}
	if c.IdentityError != "" {
		attrs = append(attrs, AttrIdentityError.String(c.IdentityError))
	}
	if c.Entity != "" && c.Entity != c.Identity {
		attrs = append(attrs, AttrEntity.String(c.Entity))
	}
	if c.Args != "" {
		attrs = append(attrs, AttrArgs.String(c.Args))
	}
	if c.Op.Idempotent {
		attrs = append(attrs, AttrIdempotent.Bool(true))
	}
	if len(c.Op.After) > 0 {
		attrs = append(attrs, AttrAfter.StringSlice(c.Op.After))
	}
	if c.Site != "" {
		attrs = append(attrs, AttrSite.String(c.Site))
	}
	attrs = append(attrs, AttrStatus.String(string(c.Status)))
	if c.Replayed {
		attrs = append(attrs, AttrReplayed.Bool(true))
	}
	span.SetAttributes(attrs...)
	if c.Err != nil {
		msg := c.Err.Error()
		if c.Op.RedactIdentity || c.Redacts {
			// The error text may quote the redacted values.
			msg = fmt.Sprintf("%T (text withheld: the op redacts)", c.Err)
		}
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}
