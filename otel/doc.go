// Package agentidemotel turns the tool calls of an agent into OpenTelemetry
// spans in production, from the same wrappers agentidem-gen generates for
// the fault suite.
//
// One line at start-up, after the tracer provider is set up:
//
//	defer agentidemotel.Install()()
//
// From then on every call of a generated wrapper made outside a test run
// starts a span named after the op, child of the span in the tool's context,
// with these attributes:
//
//	agentidem.op               op name
//	agentidem.kind             read | write
//	agentidem.identity.digest  keyed digest of a write's logical identity
//	agentidem.identity.error   why the identity could not be computed
//	agentidem.entity.digest    keyed digest of what the op touches (when not the identity)
//	agentidem.args.digest      keyed digest of a write's other arguments (entity= or idempotent)
//	agentidem.key_id           names the digest key (not the key)
//	agentidem.after            ops this one must follow (after=)
//	agentidem.idempotent       true when the op is declared idempotent
//	agentidem.site             file:line of the agent's call
//	agentidem.status           success | failed (set when the call ends)
//	agentidem.replayed         true: the sink answered from a stored result
//
// A failed call also gets the span status Error with the error's text.
// Values never leave the process: identities, entities and arguments are
// HMAC-SHA256 digests, whether or not the op redacts them.
//
// # The identity key
//
// The digests are keyed so that they reveal nothing about the values (an
// unkeyed hash of an order id or an e-mail address can be reversed by
// guessing). The audit matches two spans by digest, so every process whose
// spans are audited together must use the same key, and keep it across
// restarts: set $AGENTIDEM_IDENTITY_KEY (hex or text, at least 16 bytes) on
// every replica, or pass WithIdentityKey. Without a key, each process draws
// a random one: its spans still audit clean or not within the process, but a
// retry served by another replica or after a restart cannot be matched, and
// agentidem-gen audit says so when it sees several key ids.
//
// # Auditing
//
// Export the spans with the Collector's file exporter (OTLP JSON) or the
// SDK's stdouttrace exporter, then:
//
//	agentidem-gen audit spans.jsonl
//
// reports a write executed twice with one identity (duplicate_write), a call
// in flight together with an op it declares after= (dependent_calls_concurrent)
// and a retry from one call site with a new identity (identity_unstable).
//
// A lost acknowledgement is a duplicate only where the effect is seen: the
// agent's own span of the timed-out attempt says "failed", since the agent
// never learned that the server executed it. Trace the sink too (the handler
// or service that applies the write, through the same wrappers) and the
// audit sees both executions.
package agentidemotel
