// Package gosdk connects the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk) to agentidem: a receiving
// middleware that traces every tools/call of a server, lets the runtime gate
// it and inject faults, and a sending middleware for the client that ties
// each call to the agent invocation that made it.
//
//	tools := agentidemmcp.Tools{
//		"get_payment": agentidemmcp.Read(agentidemmcp.Entity("payment_id")),
//		"refund":      agentidemmcp.Write(agentidemmcp.Identity("payment_id")),
//	}
//	server.AddReceivingMiddleware(gosdk.Middleware(tools))
//	client.AddSendingMiddleware(gosdk.Propagate())
//
// Under the schedule explorer (interleaving scenarios), connect the client
// session inside the agent function: the server then handles its calls on
// goroutines of the invocation, inside the explorer's testing/synctest
// bubble, where the middleware's gates can hold them. A session connected
// outside the agent handles calls outside the bubble, and the Go runtime
// stops the test.
//
// When no agentidem run is active, both middlewares pass every request
// through untouched.
package gosdk

import (
	"context"
	"errors"
	"strings"
	"sync"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/toolspec"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	methodCallTool  = "tools/call"
	methodListTools = "tools/list"
)

// Middleware returns the server middleware that runs every tools/call of a
// tool listed in tools through the agentidem runtime. Add it with
// (*mcp.Server).AddReceivingMiddleware.
//
// The server's own tool annotations are read too, with no code from the
// user: a tool whose Annotations say ReadOnlyHint is traced as a read, one
// that says IdempotentHint as an idempotent write (a repeat with equal
// arguments is absorbed, never a duplicate), even when tools does not list
// it; a listed write becomes idempotent when its annotations say so. The
// middleware asks the server for its tool list (tools/list, through the
// rest of the chain) the first time it sees a tool's name, during a run.
//
// A call whose result has isError set is recorded as failed. A fault the
// runtime injects reaches the client as the error of its CallTool.
//
// During a run, a call of a tool that a key of tools misspells (the key
// names none of the server's listed tools, the tool has no key and is
// spelt nearly like it: "bookRoom" for book_room) is refused with an error
// that names both (agentidemmcp.Misspelt), rather than run untraced, or
// traced by its annotations alone without the key's Spec
// (agentidemmcp.MisspeltAnnotated).
func Middleware(tools agentidemmcp.Tools) mcp.Middleware {
	reg := agentidemmcp.New(tools)
	var mu sync.Mutex
	listed := map[string]bool{} // tool names seen in the server's list
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != methodCallTool || !runtime.Enabled() {
				return next(ctx, method, req)
			}
			ctr, ok := req.(*mcp.CallToolRequest)
			if !ok || ctr.Params == nil {
				return next(ctx, method, req)
			}
			// The call is here, whether or not its tool is traced: the
			// scheduler no longer waits for it (Propagate's Send), but
			// for its answer once the server is done with it.
			tok := ctr.Params.Meta[agentidemmcp.MetaKey]
			agentidemmcp.Arrived(tok)
			defer agentidemmcp.Answering(tok)
			mu.Lock()
			known := listed[ctr.Params.Name]
			mu.Unlock()
			if !known {
				for name, h := range annotations(ctx, next, ctr.Session) {
					mu.Lock()
					listed[name] = true
					mu.Unlock()
					if h != nil {
						reg.SetHints(name, *h)
					}
				}
			}
			op := reg.Op(ctr.Params.Name)
			if _, named := tools[ctr.Params.Name]; !named && len(tools) > 0 {
				// A key that misspells the tool is refused whether the
				// tool is untraced or traced by its annotations alone.
				mu.Lock()
				served := make([]string, 0, len(listed))
				for name := range listed {
					served = append(served, name)
				}
				mu.Unlock()
				misspelt := agentidemmcp.Misspelt
				if op != nil {
					misspelt = agentidemmcp.MisspeltAnnotated
				}
				if err := misspelt(tools, ctr.Params.Name, served); err != nil {
					return nil, err
				}
			}
			if op == nil {
				return next(ctx, method, req)
			}
			ctx, stop := agentidemmcp.Resolve(ctx, ctr.Params.Meta[agentidemmcp.MetaKey])
			defer stop()
			return agentidemmcp.Call(ctx, reg, ctr.Params.Name, ctr.Params.Arguments,
				func(ctx context.Context) (mcp.Result, error) { return next(ctx, method, req) },
				outcome)
		}
	}
}

// annotations lists the server's tools through the rest of the middleware
// chain and returns the hints of each (nil for a tool without
// annotations). A server that cannot list its tools gives none.
func annotations(ctx context.Context, next mcp.MethodHandler, ss *mcp.ServerSession) map[string]*toolspec.Hints {
	out := map[string]*toolspec.Hints{}
	params := &mcp.ListToolsParams{}
	for range 1000 { // pages; a server that never ends its list is cut short
		res, err := next(ctx, methodListTools, &mcp.ListToolsRequest{Session: ss, Params: params})
		lr, ok := res.(*mcp.ListToolsResult)
		if err != nil || !ok || lr == nil {
			return out
		}
		for _, t := range lr.Tools {
			if t == nil {
				continue
			}
			if a := t.Annotations; a != nil {
				out[t.Name] = &toolspec.Hints{ReadOnly: a.ReadOnlyHint, Idempotent: a.IdempotentHint}
			} else {
				out[t.Name] = nil
			}
		}
		if lr.NextCursor == "" {
			return out
		}
		params = &mcp.ListToolsParams{Cursor: lr.NextCursor}
	}
	return out
}

// outcome is what a tools/call result means to the trace.
func outcome(res mcp.Result) (any, error) {
	r, ok := res.(*mcp.CallToolResult)
	if !ok || r == nil {
		return nil, nil
	}
	var text []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	if r.IsError {
		msg := strings.Join(text, "\n")
		if msg == "" {
			msg = "tool reported an error"
		}
		return nil, errors.New(msg)
	}
	if r.StructuredContent != nil {
		return r.StructuredContent, nil
	}
	return strings.Join(text, "\n"), nil
}

// Propagate returns the client middleware that puts the token of the
// caller's agentidem invocation in the _meta of every tools/call, so that
// the server middleware attributes the call to it (see
// agentidemmcp.MetaKey). Add it with (*mcp.Client).AddSendingMiddleware.
//
// Until the server middleware receives the call, and from when it is done
// with it until the client's wait for the answer ends, the call counts as
// in transit (agentidemmcp.Send): the schedule explorer does not take the
// agent for quiet while the session's own goroutines, which may be older
// than the scenario (a session Setup connected once), carry the call or its
// answer. The calls of one model turn then reach their gates before their
// round is played, and an answer reaches the agent before the next round,
// on every run. An injected lost acknowledgement or lost request, which
// reaches the client as the server's text, is given back matching
// context.DeadlineExceeded (agentidemmcp.Lost), as in process: an agent
// that retries on its call's deadline is tested.
func Propagate() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != methodCallTool || !runtime.Enabled() {
				return next(ctx, method, req)
			}
			p, ok := req.GetParams().(*mcp.CallToolParams)
			if !ok || p == nil {
				return next(ctx, method, req)
			}
			tok, done := agentidemmcp.Send(ctx)
			defer done()
			if tok != "" {
				m := make(mcp.Meta, len(p.Meta)+1)
				for k, v := range p.Meta {
					m[k] = v
				}
				m[agentidemmcp.MetaKey] = tok
				p.Meta = m
			}
			res, err := next(ctx, method, req)
			if tok != "" {
				// An injected timeout came back as the server's text:
				// the agent sees it as it would in process.
				err = agentidemmcp.Lost(err)
			}
			return res, err
		}
	}
}
