package agentidemeino

import (
	"context"
	"encoding/json"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/toolspec"
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
// It covers every kind of Eino tool: invokable and streamable, plain and
// enhanced (an invokable tool run by a streaming agent goes through the
// invokable hook). A streaming call is recorded when its stream opens; the
// answer it streams is not recorded, and an injected lost acknowledgement
// closes the stream and returns the error instead. When no run is active,
// or a tool is not in tools, the call goes straight to the tool.
//
// A middleware sees the calls, never the node's tools, so it cannot tell a
// key that misspells a tool (which leaves the tool untraced) from a tool
// left out on purpose: Check, given the node's tools, does.
func Middleware(tools Tools) compose.ToolMiddleware {
	reg := toolspec.Compile(tools, "eino")
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
				}, nil)
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
				}, nil)
			}
		},
		Streamable: func(next compose.StreamableToolEndpoint) compose.StreamableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.StreamToolOutput, error) {
				e := lookup(reg, in)
				if e == nil {
					return next(ctx, in)
				}
				return call(ctx, e, in, next, func(*compose.StreamToolOutput) any { return nil },
					func(o *compose.StreamToolOutput) {
						if o != nil && o.Result != nil {
							o.Result.Close()
						}
					})
			}
		},
		EnhancedStreamable: func(next compose.EnhancedStreamableToolEndpoint) compose.EnhancedStreamableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.EnhancedStreamableToolOutput, error) {
				e := lookup(reg, in)
				if e == nil {
					return next(ctx, in)
				}
				return call(ctx, e, in, next, func(*compose.EnhancedStreamableToolOutput) any { return nil },
					func(o *compose.EnhancedStreamableToolOutput) {
						if o != nil && o.Result != nil {
							o.Result.Close()
						}
					})
			}
		},
	}
}

func lookup(reg *toolspec.Set, in *compose.ToolInput) *toolspec.Tool {
	if !runtime.Enabled() || in == nil {
		return nil
	}
	return reg.Lookup(in.Name)
}

// call is the generated wrapper's sequence around one tool call:
// Begin, Start, the tool, Finish, with Recover deferred. record gives the
// value to trace; drop, if set, releases an answer the runtime lost.
func call[O any](ctx context.Context, e *toolspec.Tool, in *compose.ToolInput,
	next func(context.Context, *compose.ToolInput) (O, error), record func(O) any, drop func(O)) (out O, err error) {
	vals, identity, entity, missing := e.ValuesOf(json.RawMessage(in.Arguments))
	c, cctx := runtime.Begin(ctx, e.Op, vals, identity, entity)
	c.IdentityMissing(missing...)
	c.Redact(e.Secrets(json.RawMessage(in.Arguments))...)
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
		if drop != nil && err == nil {
			drop(out)
		}
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
