package agentidemeino

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/toolspec"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
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
// invokable hook). A streaming call ends when its stream does: a tool may
// return its reader at once and do its work (a POST) while it streams, so
// the middleware reads the tool's stream to its end, and only then
// finishes the call and hands the chunks on, or, for an injected lost
// acknowledgement or crash, the error instead of them (callStream). The
// chunks are not recorded. When no run is active, or a tool is not in
// tools, the call goes straight to the tool.
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
		Streamable: func(next compose.StreamableToolEndpoint) compose.StreamableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.StreamToolOutput, error) {
				e := lookup(reg, in)
				if e == nil {
					return next(ctx, in)
				}
				return callStream(ctx, e, in, next, func(o *compose.StreamToolOutput) **schema.StreamReader[string] {
					if o == nil {
						return nil
					}
					return &o.Result
				})
			}
		},
		EnhancedStreamable: func(next compose.EnhancedStreamableToolEndpoint) compose.EnhancedStreamableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.EnhancedStreamableToolOutput, error) {
				e := lookup(reg, in)
				if e == nil {
					return next(ctx, in)
				}
				return callStream(ctx, e, in, next, func(o *compose.EnhancedStreamableToolOutput) **schema.StreamReader[*schema.ToolResult] {
					if o == nil {
						return nil
					}
					return &o.Result
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
// value to trace.
func call[O any](ctx context.Context, e *toolspec.Tool, in *compose.ToolInput,
	next func(context.Context, *compose.ToolInput) (O, error), record func(O) any) (out O, err error) {
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

// callStream is call for a streaming tool. The tool's effect may happen
// while its stream is produced (a goroutine that POSTs, then sends the
// result into a schema.Pipe), so the call's answer is the stream's end, not
// its opening: a lost acknowledgement injected when the stream opened
// closed it before the POST, and the suite judged the agent's retry, the
// only effect, an absorbed repeat (rtS #1: a buggy agent passed). A
// goroutine hands the tool's chunks on as they come and, once the tool's
// stream has ended, finishes the call with the stream's error, if any:
// what Finish returns for a lost acknowledgement or a crash ends the
// stream handed on in its place, as a stream that breaks after the tool's
// work did, and the agent never sees the end it would have. If the agent
// closes the stream before its end, the tool's stream is closed too, as
// it is in production, and the call is finished with errClosedEarly: the
// tool may not have done its work, so a fault planned on its answer is
// reported as not fired, never as fired with the agent's retry absorbed.
func callStream[O any, T any](ctx context.Context, e *toolspec.Tool, in *compose.ToolInput,
	next func(context.Context, *compose.ToolInput) (O, error), reader func(O) **schema.StreamReader[T]) (out O, err error) {
	vals, identity, entity, missing := e.ValuesOf(json.RawMessage(in.Arguments))
	c, cctx := runtime.Begin(ctx, e.Op, vals, identity, entity)
	c.IdentityMissing(missing...)
	c.Redact(e.Secrets(json.RawMessage(in.Arguments))...)
	if err = c.Start(); err != nil {
		return out, err
	}
	defer c.Recover(&err)
	out, err = next(cctx, in)
	var src *schema.StreamReader[T]
	p := reader(out)
	if p != nil {
		src = *p
	}
	if err != nil || src == nil {
		if lost := c.Finish(err, nil); lost != nil {
			var zero O
			return zero, lost
		}
		return out, err
	}
	c.FinishLater()
	r, w := schema.Pipe[T](0)
	*p = r
	go func() {
		defer w.Close()
		defer src.Close()
		var serr error
		for {
			v, rerr := src.Recv()
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				serr = rerr
				break
			}
			if w.Send(v, nil) {
				_ = c.Finish(errClosedEarly, nil)
				return
			}
		}
		var zero T
		if lost := c.Finish(serr, nil); lost != nil {
			w.Send(zero, lost)
			return
		}
		if serr != nil {
			w.Send(zero, serr)
		}
	}()
	return out, nil
}

// errClosedEarly is what a streaming call is finished with when the agent
// closed its stream before the tool's stream ended (callStream).
var errClosedEarly = errors.New("the agent closed the tool's stream before its end: the tool may not have finished its work")
