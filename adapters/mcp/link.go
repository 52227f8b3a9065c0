package agentidemmcp

import (
	"context"
	"sync"

	"github.com/agentidem/agentidem-go/runtime"
)

// MetaKey is the key, in a request's _meta object, of the token that ties
// an MCP call to the agent invocation that made it.
//
// An agentidem run travels in the context.Context of the agent. A
// transport that keeps the client's context up to the server (mcp-go's
// in-process client) needs nothing more. One that does not (go-sdk's
// in-memory and network transports, where the server handles the call on
// a context of its own) loses the run on the way; the client then puts
// Token(ctx) under MetaKey in the call's _meta, and the server middleware
// finds the invocation again with Resolve. Both ends must be in one
// process, which is how the harness runs them.
const MetaKey = "agentidem/run"

var links struct {
	mu sync.Mutex
	// transit holds the calls of the tokens Send returned, until the
	// caller's done.
	transit map[string]*transit
}

// Token returns a token naming ctx, for the _meta of an outgoing call, or
// "" when no agentidem run is active or ctx can never be cancelled (a run's
// invocation context always can). The token lives until ctx is done. It
// is runtime.Token, which carries a run over any transport.
func Token(ctx context.Context) string { return runtime.Token(ctx) }

// Send is Token for a call about to be sent over a transport that a
// server in the process reads and answers on goroutines of its own
// (go-sdk's): until the server side calls Arrived with tok, and again from
// its Answering until the caller calls done (when its wait for the answer
// ended, however it did), the run's scheduler counts the call as in
// transit and does not take the agent for quiet (runtime.Sending). Without
// that, a call on its way through a session older than the scenario, or
// an answer on its way back, was left out of the round of calls it belongs
// with, as real time had it. tok is "" when Token's is.
func Send(ctx context.Context) (tok string, done func()) {
	tok = Token(ctx)
	if tok == "" {
		return "", func() {}
	}
	t := &transit{ctx: ctx, leg: runtime.Sending(ctx)}
	links.mu.Lock()
	if links.transit == nil {
		links.transit = map[string]*transit{}
	}
	links.transit[tok] = t
	links.mu.Unlock()
	return tok, func() {
		links.mu.Lock()
		leg := t.leg
		t.leg, t.closed = nil, true
		delete(links.transit, tok)
		links.mu.Unlock()
		if leg != nil {
			leg()
		}
	}
}

// Sent is Send for a caller that cannot say when its wait for the answer
// ends (one that puts mcpgo.Meta in its request by hand): the call counts
// as in transit until the server side calls Arrived with tok, and its
// answer does not (Answering ignores it). A call that never arrives, or
// whose ctx is done first, stops counting then; one still on its way
// transitGrace after the last hand-off, with the agent otherwise quiet, is
// let go by the scheduler, and the trace's notes say so
// (runtime.Sending). tok is "" when Token's is.
func Sent(ctx context.Context) (tok string) {
	tok = Token(ctx)
	if tok == "" {
		return ""
	}
	t := &transit{ctx: ctx, leg: runtime.Sending(ctx), oneWay: true}
	links.mu.Lock()
	if links.transit == nil {
		links.transit = map[string]*transit{}
	}
	links.transit[tok] = t
	links.mu.Unlock()
	context.AfterFunc(ctx, func() { Arrived(tok) })
	return tok
}

// transit is a call that Send gave a token, between the caller's send and
// the end of its wait for the answer.
type transit struct {
	ctx    context.Context
	leg    func() // ends the leg on its way (runtime.Sending), nil at the server
	closed bool   // the caller's wait ended
	oneWay bool   // Sent's: done once it arrived
}

// Arrived says that the call carrying token tok (a call's _meta value
// under MetaKey) reached the server: see Send. An unknown token, or one
// already arrived, is ignored.
func Arrived(tok any) {
	s, _ := tok.(string)
	if s == "" {
		return
	}
	links.mu.Lock()
	var leg func()
	if t := links.transit[s]; t != nil {
		leg, t.leg = t.leg, nil
		if t.oneWay {
			delete(links.transit, s)
		}
	}
	links.mu.Unlock()
	if leg != nil {
		leg()
	}
}

// Answering says that the server is done with the call carrying token tok
// and its answer goes back to the caller: in transit again until the
// caller's done (see Send). An unknown token, or one whose caller stopped
// waiting, is ignored.
func Answering(tok any) {
	s, _ := tok.(string)
	if s == "" {
		return
	}
	links.mu.Lock()
	defer links.mu.Unlock()
	if t := links.transit[s]; t != nil && !t.closed && t.leg == nil {
		t.leg = runtime.Sending(t.ctx)
	}
}

// Resolve returns the context that serves a call carrying token tok (a
// call's _meta value under MetaKey): runtime.Resolve, for a token that is
// a string. The server's own context srv yields the values of the client
// context that Token registered, and is cancelled when the harness ends
// that delivery (a crash, a stalled scenario's abandon), not when it
// returns: see runtime.Resolve. With
// an unknown, empty or non-string token it returns srv and a no-op stop.
// Call stop when the call is over. The context is runtime.Served: a crash
// of the invocation refuses the calls the server makes with it instead of
// ending the server's goroutine.
func Resolve(srv context.Context, tok any) (ctx context.Context, stop func()) {
	s, _ := tok.(string)
	return runtime.Resolve(srv, s)
}
