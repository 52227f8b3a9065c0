package runtime

import (
	"context"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// carried holds the contexts that Token named, until each is done.
var carried struct {
	n  atomic.Uint64
	mu sync.Mutex
	m  map[string]context.Context
}

// Token returns a token naming ctx, the agent's context, for a request
// that crosses a transport that carries no Go context (a message bus's
// headers, an MCP call's _meta, gRPC metadata, a job's payload), or ""
// when no agentidem run is active or ctx can never be cancelled (a run's
// invocation context always can). The token lives until ctx is done.
//
// A run travels in the agent's context.Context. A tool the agent reaches
// through a server in the process (a NATS responder, a Kafka or AMQP
// consumer, a gRPC service that Setup started) runs on the server's
// goroutine with a context of its own: with two deliveries in flight
// (duplicate_delivery/concurrent), nothing tells which one the server's
// call serves, and the scenario is inconclusive. The agent puts
// Token(ctx) in the request's headers, and the handler takes its context
// from Resolve: its calls are then the delivery's that sent the request.
// Both ends must be in one process, which is how the harness runs them;
// outside a run the token is "" and Resolve returns the server's context,
// so the code can stay in production.
func Token(ctx context.Context) string {
	if !Enabled() || ctx == nil || ctx.Done() == nil {
		return ""
	}
	tok := strconv.FormatUint(carried.n.Add(1), 10)
	carried.mu.Lock()
	if carried.m == nil {
		carried.m = map[string]context.Context{}
	}
	carried.m[tok] = ctx
	carried.mu.Unlock()
	context.AfterFunc(ctx, func() {
		carried.mu.Lock()
		delete(carried.m, tok)
		carried.mu.Unlock()
	})
	return tok
}

// Resolve returns the context that serves a request carrying token tok
// (see Token): the server's own context srv (its values, deadline and
// cancellation), which also yields the values of the agent's context
// that Token named, and is cancelled when that one is. With an unknown or
// empty token it returns srv and a no-op stop. Call stop when the request
// is handled.
//
// For the run's own values the agent's context comes first: it names the
// call the request was sent inside of, where srv may name only the
// invocation (a session connected with the agent's context). The context
// is Served: a crash of the invocation refuses the calls the server makes
// with it, instead of ending the server's goroutine, which would leave
// the request unanswered.
func Resolve(srv context.Context, tok string) (ctx context.Context, stop func()) {
	if tok == "" {
		return srv, func() {}
	}
	carried.mu.Lock()
	client := carried.m[tok]
	carried.mu.Unlock()
	if client == nil {
		return srv, func() {}
	}
	c, cancel := context.WithCancel(srv)
	unhook := context.AfterFunc(client, cancel)
	return Served(joined{Context: c, client: client}), func() { unhook(); cancel() }
}

// joined is the server's context, with the client's values behind it.
type joined struct {
	context.Context
	client context.Context
}

// Value asks the server's context first, then the client's; but for this
// package's own keys (the run, the call a call is made inside of) the
// client's first. The server's context may carry a run too: a session
// the agent connected with its own context serves every call on a context
// derived from it. A tool calling another tool over that session then
// sends its own context as the client's, and the call is made inside that
// tool, not by the agent.
func (j joined) Value(key any) any {
	if ownKey(key) {
		if v := j.client.Value(key); v != nil {
			return v
		}
		return j.Context.Value(key)
	}
	if v := j.Context.Value(key); v != nil {
		return v
	}
	return j.client.Value(key)
}

// Deadline is the earlier of the two deadlines.
func (j joined) Deadline() (time.Time, bool) {
	d, ok := j.Context.Deadline()
	if cd, cok := j.client.Deadline(); cok && (!ok || cd.Before(d)) {
		return cd, true
	}
	return d, ok
}

// ownPkg is this package's import path, whose unexported context keys
// carry a run.
var ownPkg = reflect.TypeFor[Op]().PkgPath()

// ownKey reports whether key is one of this package's context keys.
func ownKey(key any) bool {
	t := reflect.TypeOf(key)
	return t != nil && t.PkgPath() == ownPkg
}
