// Package mcpgo connects mcp-go (github.com/mark3labs/mcp-go) to agentidem:
// a tool handler middleware that traces every tool call of a server and lets
// the runtime gate it and inject faults.
//
//	tools := agentidemmcp.Tools{
//		"get_payment": agentidemmcp.Read(agentidemmcp.Entity("payment_id")),
//		"refund":      agentidemmcp.Write(agentidemmcp.Identity("payment_id")),
//	}
//	s := server.NewMCPServer("bank", "1.0.0", server.WithToolHandlerMiddleware(mcpgo.Middleware(tools)))
//
// mcp-go's in-process client hands the caller's context to the server and
// runs the tool on the caller's goroutine, so calls are attributed to the
// agent invocation that made them, and gated by the schedule explorer, with
// nothing more. Over a transport that does not, the client puts
// agentidemmcp.Token(ctx) under agentidemmcp.MetaKey in the request's _meta
// (Meta does it).
//
// When no agentidem run is active, the middleware calls the tool directly.
package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/toolspec"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Middleware returns the middleware that runs every call of a tool listed
// in tools through the agentidem runtime. Install it with
// server.WithToolHandlerMiddleware (or (*server.MCPServer).Use).
//
// The server's own tool annotations are read too, with no code from the
// user: a tool whose annotation sets ReadOnlyHint is traced as a read, one
// that sets IdempotentHint as an idempotent write (a repeat with equal
// arguments is absorbed, never a duplicate), even when tools does not list
// it; a listed write becomes idempotent when its annotation says so.
// (mcp.NewTool gives every tool ReadOnlyHint and IdempotentHint false:
// those say nothing of a write's identity, so such a tool is traced only
// when tools lists it.)
//
// A result with isError set is recorded as a failed call. A fault the
// runtime injects reaches the client as the error of its CallTool.
//
// During a run, a call of a tool that a key of tools misspells (the key
// names none of the server's tools, the tool has no key and is spelt
// nearly like it: "bookRoom" for book_room) is refused with an error that
// names both (agentidemmcp.Misspelt), rather than run untraced, or traced
// by its annotations alone without the key's Spec
// (agentidemmcp.MisspeltAnnotated).
func Middleware(tools agentidemmcp.Tools) server.ToolHandlerMiddleware {
	reg := agentidemmcp.New(tools)
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if !runtime.Enabled() {
				return next(ctx, req)
			}
			if srv := server.ServerFromContext(ctx); srv != nil {
				if st := srv.GetTool(req.Params.Name); st != nil {
					reg.SetHints(req.Params.Name, hints(st.Tool.Annotations))
				}
			}
			var tok any
			if req.Params.Meta != nil {
				tok = req.Params.Meta.AdditionalFields[agentidemmcp.MetaKey]
			}
			// The call is here, whether or not its tool is traced: the
			// scheduler no longer waits for it (Meta's transit).
			agentidemmcp.Arrived(tok)
			// A key that misspells the tool is refused whether the tool
			// is untraced or traced by its annotations alone.
			op := reg.Op(req.Params.Name)
			if err := misspelt(ctx, tools, req.Params.Name, op != nil); err != nil {
				return nil, err
			}
			if op == nil {
				return next(ctx, req)
			}
			ctx, stop := agentidemmcp.Resolve(ctx, tok)
			defer stop()
			args := req.Params.RawArguments
			if len(args) == 0 && req.Params.Arguments != nil {
				args, _ = json.Marshal(req.Params.Arguments)
			}
			return agentidemmcp.Call(ctx, reg, req.Params.Name, args,
				func(ctx context.Context) (*mcp.CallToolResult, error) { return next(ctx, req) },
				outcome)
		}
	}
}

// misspelt is agentidemmcp.Misspelt for a call of tool against the tools
// of the server that serves it, or MisspeltAnnotated when the tool is
// traced by its annotations (hinted).
func misspelt(ctx context.Context, tools agentidemmcp.Tools, tool string, hinted bool) error {
	if _, ok := tools[tool]; ok || len(tools) == 0 {
		return nil // the common case of a traced call, without listing anything
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil
	}
	every := true // every key names a tool of the server: nothing to list
	for k := range tools {
		if srv.GetTool(k) == nil {
			every = false
			break
		}
	}
	if every {
		return nil
	}
	var served []string
	for name := range srv.ListTools() {
		served = append(served, name)
	}
	if hinted {
		return agentidemmcp.MisspeltAnnotated(tools, tool, served)
	}
	return agentidemmcp.Misspelt(tools, tool, served)
}

// hints reads a tool's annotation.
func hints(a mcp.ToolAnnotation) toolspec.Hints {
	return toolspec.Hints{
		ReadOnly:   a.ReadOnlyHint != nil && *a.ReadOnlyHint,
		Idempotent: a.IdempotentHint != nil && *a.IdempotentHint,
	}
}

// outcome is what a tool result means to the trace.
func outcome(r *mcp.CallToolResult) (any, error) {
	if r == nil {
		return nil, nil
	}
	var text []string
	for _, c := range r.Content {
		if t, ok := mcp.AsTextContent(c); ok {
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

// Meta returns the _meta of a tool call made on ctx: the token that ties
// it to the caller's agentidem invocation, or nil when no run is active.
// Set it as req.Params.Meta when the transport does not carry the context
// to the server. Build it for a request that is sent at once: until the
// server's Middleware receives the call, it counts as in transit
// (agentidemmcp.Sent), and the schedule explorer does not take the agent
// for quiet while the call is on its way through the transport's
// goroutines (an SSE or HTTP client connected once, in Setup), so the
// calls of one model turn reach their gates before their round is played.
func Meta(ctx context.Context) *mcp.Meta {
	tok := agentidemmcp.Sent(ctx)
	if tok == "" {
		return nil
	}
	return &mcp.Meta{AdditionalFields: map[string]any{agentidemmcp.MetaKey: tok}}
}
