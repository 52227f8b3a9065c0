package agentidemeino

import (
	"context"
	"encoding/json"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/cloudwego/eino/compose"
)

// Middleware returns the tool middleware that runs every call of a tool
// listed in tools through the agentidem runtime, the way a generated
// wrapper runs an annotated function: each call is recorded with its
// identity, waits at the scheduler's gates, and may get an injected fault
// instead of running (or instead of its answer). Put it in
// compose.ToolsNodeConfig.ToolCallMiddlewares; the op descriptors are made
// once, here.
//
// It covers invokable tools (plain and enhanced). Streaming tools pass
// through untraced. When no run is active, or a tool is not in tools, the
// call goes straight to the tool.
func Middleware(tools Tools) compose.ToolMiddleware {
	reg := compile(tools)
	return compose.ToolMiddleware{
		Invokable: func(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
				e := lookup(reg, in)
				if e == nil {
					return next(ctx, in)
				}
				return call(ctx, e, in, next, func(o *compose.ToolOutput) any {
					if o == nil {
						return nil
					}
					return result(o.Result)
				})
			}
		},
		EnhancedInvokable: func(next compose.EnhancedInvokableToolEndpoint) compose.EnhancedInvokableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.EnhancedInvokableToolOutput, error) {
				e := lookup(reg, in)
				if e == nil {
					return next(ctx, in)
				}
				return call(ctx, e, in, next, func(o *compose.EnhancedInvokableToolOutput) any {
					if o == nil {
						return nil
					}
					return o.Result
				})
			}
		},
	}
}

func lookup(reg map[string]*entry, in *compose.ToolInput) *entry {
	if !runtime.Enabled() || in == nil {
		return nil
	}
	return reg[in.Name]
}

// call is the generated wrapper's sequence around one tool call:
// Begin, Start, the tool, Finish, with Recover deferred.
func call[O any](ctx context.Context, e *entry, in *compose.ToolInput,
	next func(context.Context, *compose.ToolInput) (O, error), record func(O) any) (out O, err error) {
	vals, identity, entity := e.values(json.RawMessage(in.Arguments))
	c, cctx := runtime.Begin(ctx, e.op, vals, identity, entity)
	if err = c.Start(); err != nil {
		return out, err
	}
	defer c.Recover(&err)
	out, err = next(cctx, in)
	var rec any
	if err == nil {
		rec = record(out)
	}
	if lost := c.Finish(err, rec); lost != nil {
		var zero O
		return zero, lost
	}
	return out, err
}

// result records a tool's string answer: as JSON when it is JSON.
func result(s string) any {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return s
}
