package agentidemeino

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

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
	c, cctx := runtime.Begin(runtime.FrameworkCall(ctx), e.Op, vals, identity, entity)
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
// goroutine reads the tool's stream as it comes, never waiting for the
// agent, and another hands the chunks on; once the tool's stream has
// ended, the first finishes the call with the stream's error, if any:
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
	c, cctx := runtime.Begin(runtime.FrameworkCall(ctx), e.Op, vals, identity, entity)
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
	r, w := schema.Pipe[T](streamBuffer)
	*p = r
	q := &chunkQueue[T]{}
	q.cond.L = &q.mu
	go func() { // reads the tool's stream to its end, then finishes the call
		defer src.Close() // at once, if the agent closed its stream early
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
			if !q.push(v) {
				return // closeEarly finished the call
			}
		}
		if !q.finishing() {
			return
		}
		if lost := c.Finish(serr, nil); lost != nil {
			serr = lost
		}
		q.end(serr)
	}()
	go func() { // hands the chunks on, and the end
		defer w.Close()
		for {
			v, ok, end := q.pop()
			if !ok {
				if end != nil {
					w.Send(v, end)
				}
				return
			}
			if w.Send(v, nil) {
				// The agent closed its stream: the reading goroutine
				// stops at its next chunk and closes the tool's stream.
				if q.closeEarly() {
					_ = c.Finish(errClosedEarly, nil)
				}
				return
			}
		}
	}()
	return out, nil
}

// errClosedEarly is what a streaming call is finished with when the agent
// closed its stream before the tool's stream ended (callStream).
var errClosedEarly = errors.New("the agent closed the tool's stream before its end: the tool may not have finished its work")

// streamBuffer is the capacity of the stream a streaming call hands on:
// the chunks of a tool's stream that the agent leaves unread (Eino leaves
// the other streams of a node that failed) are held there, so that the
// goroutine handing them on ends, as the tool's own goroutine does in
// production once its stream's buffer took them.
const streamBuffer = 32

// chunkQueue carries a tool's chunks from the goroutine that reads the
// tool's stream, which never waits for the agent, to the one that hands
// them on, which does.
type chunkQueue[T any] struct {
	mu     sync.Mutex
	cond   sync.Cond
	chunks []T
	ended  bool
	err    error // the stream's end: the tool's error, or the one Finish gave
	closed bool  // the agent closed the stream handed on
	done   bool  // the call is being finished, by one of the two
}

// finishing claims the call's Finish for the stream's end; false if the
// agent's close claimed it first.
func (q *chunkQueue[T]) finishing() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.done {
		return false
	}
	q.done = true
	return true
}

// push queues v; false if the agent has closed its stream.
func (q *chunkQueue[T]) push(v T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.chunks = append(q.chunks, v)
	q.cond.Signal()
	return true
}

func (q *chunkQueue[T]) end(err error) {
	q.mu.Lock()
	q.ended, q.err = true, err
	q.cond.Signal()
	q.mu.Unlock()
}

// closeEarly notes that the agent closed the stream handed on (the
// reading goroutine stops at its next chunk, and closes the tool's
// stream), and claims the call's Finish unless the stream's end claimed
// it first.
func (q *chunkQueue[T]) closeEarly() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	if q.done {
		return false
	}
	q.done = true
	return true
}

// pop returns the next chunk, or ok false and the stream's end.
func (q *chunkQueue[T]) pop() (v T, ok bool, end error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.chunks) == 0 && !q.ended {
		q.cond.Wait()
	}
	if len(q.chunks) == 0 {
		return v, false, q.err
	}
	v = q.chunks[0]
	var zero T
	q.chunks[0] = zero
	q.chunks = q.chunks[1:]
	return v, true, nil
}
