package runtime

import (
	"context"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
)

// carried holds the contexts that Token named, until each is done and,
// for one of a run, until that run ended (recorder.stop).
var carried struct {
	n  atomic.Uint64
	mu sync.Mutex
	m  map[string]context.Context
}

// Token returns a token naming ctx, the agent's context, for a request
// that crosses a transport that carries no Go context (a message bus's
// headers, an MCP call's _meta, gRPC metadata, a job's payload), or ""
// when no agentidem run is active or ctx can never be cancelled (a run's
// invocation context always can). The token lives until ctx is done and,
// for a context of a run's delivery, until that run has ended: a consumer
// that takes the message after the delivery returned (an asynchronous
// bus, whose publisher does not wait for the handler) still finds it.
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
	inv := invocationOf(ctx)
	if inv != nil {
		inv.rec.carries.Store(true)
	}
	context.AfterFunc(ctx, func() {
		if inv != nil && inv.rec.keepToken(tok) {
			return // dropped when the run ends
		}
		carried.mu.Lock()
		delete(carried.m, tok)
		carried.mu.Unlock()
	})
	return tok
}

// keepToken keeps tok, a token of a context of r's that is done, until r
// stops, and reports whether it does: false once r has stopped.
func (r *recorder) keepToken(tok string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped.Load() {
		return false
	}
	x := r.rareLocked()
	x.tokens = append(x.tokens, tok)
	return true
}

// dropTokens hands the tokens keepToken kept to r's suite, which forgets
// them once its report is assembled (lateWatch.stop); r has stopped. A
// consumer that serves a message after the run ended (a bus whose
// publisher does not wait for the handler, with no Settle to hold the
// delivery) then makes this run's late call, told as any (late.go).
// Forgotten here, the call carried no run and was told nowhere: the run's
// end said the charge was never made, a missing_write of a correct agent
// (TestConsumerCallAfterTheRunWithoutASettle). Outside a suite they are
// forgotten now.
func (r *recorder) dropTokens() {
	r.mu.Lock()
	toks := r.odd().tokens
	if r.rare != nil {
		r.rare.tokens = nil
	}
	r.mu.Unlock()
	if len(toks) == 0 {
		return
	}
	if w := r.late.watch(); w != nil {
		w.mu.Lock()
		if w.on.Load() {
			w.tokens = append(w.tokens, toks...)
			toks = nil
		}
		w.mu.Unlock()
	}
	forgetTokens(toks)
}

// forgetTokens drops toks from the tokens Resolve finds.
func forgetTokens(toks []string) {
	if len(toks) == 0 {
		return
	}
	carried.mu.Lock()
	for _, t := range toks {
		delete(carried.m, t)
	}
	carried.mu.Unlock()
}

// invocationOf returns the invocation ctx belongs to, nil for none.
func invocationOf(ctx context.Context) *invocation {
	switch v := ctx.Value(enclosingKey{}).(type) {
	case *Call:
		return v.inv
	case *invocation:
		return v
	}
	return nil
}

// Resolve returns the context that serves a request carrying token tok
// (see Token): the server's own context srv (its values, deadline and
// cancellation), which also yields the values of the agent's context
// that Token named. With an unknown or empty token it returns srv and a
// no-op stop. Call stop when the request is handled.
//
// For the run's own values the agent's context comes first: it names the
// call the request was sent inside of, where srv may name only the
// invocation (a session connected with the agent's context). The context
// is Served: a crash of the invocation refuses the calls the server makes
// with it, instead of ending the server's goroutine, which would leave
// the request unanswered.
//
// The context is cancelled when the harness ends the delivery that sent
// the request: when it crashes it (crash_restart), as a crash ends the
// process the handler runs in, or when it abandons a stalled scenario.
// It is not cancelled when the delivery returns, nor when a context the
// agent derived from its own (a deadline it set) ends: a handler that
// takes the message after the publisher returned runs, in production, on
// a context that nothing of the publisher's ends, and so it does here.
// Before, it was cancelled with the agent's context, as the delivery
// returned, and whether an asynchronous consumer's call came before or
// after that decided the verdict (red team rtY #4).
//
// After a crash, the delivery's token is the crashed process's: a message
// it published and the bus delivers again (nacked, redelivered) is
// handled, in production, by the restarted process. So once the restart
// of the crashed delivery has begun, Resolve serves the token with the
// restart's context, and the calls are the restart's, traced and judged
// (a charge the redelivery makes again is the restart's repeat of it).
// Before the restart begins the process is dead, and the calls are
// refused. Before, every redelivery's call was refused for good, and the
// bus redelivered the message forever (red team rtY #5).
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
	var unhook func() bool
	if inv := invocationOf(client); inv != nil {
		if inv.dead.Load() {
			if next := inv.rec.restartOf(inv); next != nil {
				inv, client = next, &next.ctx
			}
		}
		unhook = context.AfterFunc(inv.haltContext(), cancel)
	} else {
		unhook = context.AfterFunc(client, cancel)
	}
	return Served(joined{Context: c, client: client}), func() { unhook(); cancel() }
}

// restartOf returns the invocation that began after inv, which crashed:
// its restart; nil while none has begun.
func (r *recorder) restartOf(inv *invocation) *invocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.all) - 1; i >= 0; i-- {
		if x := r.all[i]; x.n > inv.n && !x.dead.Load() {
			return x
		}
	}
	return nil
}

// invHalt is the context of an invocation that the harness's end of it
// cancels (haltContext).
type invHalt struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// haltContext returns a context cancelled when the harness ends inv: a
// crash, or the abandon of a stalled scenario (halt); not when inv
// returns. Made on first use: only a carried run needs it.
func (inv *invocation) haltContext() context.Context {
	if h := inv.halted.Load(); h != nil {
		return h.ctx
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &invHalt{ctx, cancel}
	if !inv.halted.CompareAndSwap(nil, h) {
		cancel()
		return inv.halted.Load().ctx
	}
	if inv.halting.Load() {
		cancel()
	}
	return ctx
}

// halt cancels inv's context, as the harness ends it (a crash, an
// abandon), and what haltContext returned.
func (inv *invocation) halt() {
	inv.halting.Store(true)
	if h := inv.halted.Load(); h != nil {
		h.cancel()
	}
	inv.cancel()
}

// joined is the server's context, with the client's values behind it.
// Its deadline is the server's: a deadline of the agent's (its context's
// or one it set) does not cross a transport, and does not end the
// handler's context (Resolve).
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
	if _, ok := key.(carriedKey); ok {
		return true
	}
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

// ownPkg is this package's import path, whose unexported context keys
// carry a run.
var ownPkg = reflect.TypeFor[Op]().PkgPath()

// ownKey reports whether key is one of this package's context keys.
func ownKey(key any) bool {
	t := reflect.TypeOf(key)
	return t != nil && t.PkgPath() == ownPkg
}

// carriedKey marks a context Resolve returned.
type carriedKey struct{}

// isCarried reports whether ctx is, or derives from, one Resolve
// returned: its calls are made by a server in the process for the
// delivery that sent the request, not by a goroutine the agent left.
func isCarried(ctx context.Context) bool {
	return ctx != nil && ctx.Value(carriedKey{}) != nil
}
