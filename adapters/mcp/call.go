package agentidemmcp

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/toolspec"
)

// Registry is a compiled Tools map: one runtime.Op per tool, made once. The
// SDK middlewares (packages gosdk and mcpgo) are built on it; use it
// directly to wrap the tool calls of another MCP server.
type Registry struct {
	tools *toolspec.Set

	mu    sync.Mutex
	hints map[string]toolspec.Hints // from the server's tool definitions
}

// New compiles tools. It panics on a Spec that was not built with Read or
// Write, a programming error.
func New(tools Tools) *Registry { return &Registry{tools: toolspec.Compile(tools, "mcp")} }

// Op returns the op descriptor of a tool, or nil for a tool the registry
// does not know.
func (r *Registry) Op(tool string) *runtime.Op {
	if e := r.lookup(tool); e != nil {
		return e.Op
	}
	return nil
}

// SetHints records what the server's own definition of tool says about it:
// MCP's readOnlyHint and idempotentHint (see toolspec.Hints.Apply for how
// they combine with the tool's Spec). The SDK middlewares call it with the
// annotations of the server's tools, so annotated tools need no Spec.
func (r *Registry) SetHints(tool string, h toolspec.Hints) {
	r.mu.Lock()
	if r.hints == nil {
		r.hints = map[string]toolspec.Hints{}
	}
	r.hints[tool] = h
	r.mu.Unlock()
}

// HasHints reports whether SetHints was called for tool.
func (r *Registry) HasHints(tool string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.hints[tool]
	return ok
}

// lookup is the tool's compiled Spec, as its hints describe it.
func (r *Registry) lookup(tool string) *toolspec.Tool {
	return r.tools.LookupHinted(tool, func() (toolspec.Hints, bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		h, ok := r.hints[tool]
		return h, ok
	})
}

// noRunWhy and noRunFix are what a refused call that came without the
// agent's invocation lacked and what to do (runtime.Received).
const (
	noRunWhy = "it came over MCP on a request whose context does not carry the agent's invocation (the client's CallTool was given context.Background() or a context kept from elsewhere, or the client sends no token)"
	noRunFix = "pass the agent's ctx to CallTool, with gosdk.Propagate installed on a go-sdk client (with mcp-go, over a transport that drops the context, mcpgo.Meta(ctx) in the request's _meta)"
)

// Call runs one call of tool, with the JSON arguments args, through the
// agentidem runtime, the way a generated wrapper runs an annotated
// function: it records the call, lets the runtime gate it and inject a
// fault, and records the outcome.
//
// next runs the tool with the context it is given (which carries the
// traced call, for runtime.MarkReplayed). outcome tells what next's result
// means: the value to record and the tool-level error it carries, if any
// (an MCP result with isError set is a failed call, not a success). When
// the runtime injects a fault, Call returns the zero R and an error
// matching runtime.ErrInjected instead of the tool's answer.
//
// The call belongs to the agent invocation that ctx carries (see Token and
// Resolve for transports that drop it). A call whose context carries no
// run is attributed to the one invocation running in the process, if
// there is exactly one, so a forgotten propagation does not silently
// leave the tools untested; the report warns (context_detached) that the
// agent's cancellation does not reach it. With several at once (two
// deliveries of concurrent duplicate delivery, parallel tests) it is
// refused, and the report says the request's context did not carry the
// agent's invocation.
//
// When no run is active, or the tool is not in the registry, Call is
// next(ctx).
func Call[R any](ctx context.Context, r *Registry, tool string, args json.RawMessage,
	next func(context.Context) (R, error), outcome func(R) (any, error)) (res R, err error) {
	if !runtime.Enabled() {
		return next(ctx)
	}
	e := r.lookup(tool)
	if e == nil {
		return next(ctx)
	}
	vals, identity, entity, missing := e.ValuesOf(args)
	// When ctx carries no run (the client's context did not reach the
	// server with the agent's invocation: CallTool given
	// context.Background(), or no token sent), the runtime attributes the
	// call by its goroutine: to the one invocation running, with a
	// context_detached warning; with several deliveries or runs at once
	// it refuses the call, and says why in MCP's words. It did so too
	// when the adapter called Begin without a context, but worded the
	// refusal as for a tool that has no context.Context parameter, which
	// no MCP call is (red team R4), and a second time for the same call.
	call, cctx := runtime.Begin(runtime.Received(ctx, noRunWhy, noRunFix), e.Op, vals, identity, entity)
	call.IdentityMissing(missing...)
	call.Redact(e.Secrets(args)...)
	if err = call.Start(); err != nil {
		return res, err
	}
	defer call.Recover(&err)
	res, err = next(cctx)
	var recorded any
	toolErr := err
	if err == nil && outcome != nil {
		recorded, toolErr = outcome(res)
	}
	if lost := call.Finish(toolErr, recorded); lost != nil {
		var zero R
		return zero, lost
	}
	return res, err
}
