package runtime

import "context"

// Received returns ctx marked as the context on which a server in the
// process received a call of one of its tools over a transport (an MCP
// request), for Begin. A call always has such a context, but it carries
// the agent's run only when the transport carried the client's: when it
// does not (the client called with context.Background(), or sent no
// token), Begin attributes the call by its goroutine, as it does a call
// whose context does not come from the agent's, and a refusal says so in
// the transport's words: why, how the call came and what its context
// lacked; fix, what to do. When ctx carries a run that has ended (a
// session connected with an earlier run's context), the call is that
// run's late call, and is attributed as well to the run active now, as
// one that carried none.
//
// Received is called only by framework adapters (adapters/mcp).
func Received(ctx context.Context, why, fix string) context.Context {
	if ctx == nil {
		return nil
	}
	return &receivedContext{Context: ctx, why: why, fix: fix}
}

// receivedKey finds the receivedContext a context derives from.
type receivedKey struct{}

type receivedContext struct {
	context.Context
	why, fix string
}

func (c *receivedContext) Value(key any) any {
	if _, ok := key.(receivedKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// receivedOf returns the mark Received put on ctx, or nil.
func receivedOf(ctx context.Context) *receivedContext {
	if ctx == nil {
		return nil
	}
	rc, _ := ctx.Value(receivedKey{}).(*receivedContext)
	return rc
}

// bare returns a context with c's mark and nothing of the run c carries.
func (c *receivedContext) bare() context.Context {
	return &receivedContext{Context: context.Background(), why: c.why, fix: c.fix}
}

// endedRun reports whether ctx carries a run that has ended.
func endedRun(ctx context.Context) bool {
	switch v := ctx.Value(enclosingKey{}).(type) {
	case *Call:
		return v.inv != nil && v.inv.rec.stopped.Load()
	case *invocation:
		return v.rec.stopped.Load()
	}
	return false
}
