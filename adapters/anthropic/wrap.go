package agentidemanthropic

import (
	"context"
	"encoding/json"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/toolspec"
	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
)

// Wrap returns tools in the same order, each one listed in specs replaced
// by a tool that runs through the agentidem runtime the way a generated
// wrapper runs an annotated function: each Execute is recorded with its
// identity, waits at the scheduler's gates, and may get an injected fault
// instead of running (or instead of its answer). Name, Description and
// InputSchema are the wrapped tool's. Tools not in specs are returned as
// they are. Pass the result to NewToolRunner (NewToolRunnerStreaming calls
// the same Execute); the op descriptors are made once, here.
//
// Wrap panics on a key of specs that misspells one of tools: a key that
// names none of them while a tool that no key names is spelt nearly like
// it ("bookRoom" for book_room; toolspec.Tools.Misspelt). Such a key is a
// programming error that no run reveals: its tool is passed through
// untraced and never faulted, and the suite may pass an agent it never
// tested. Wrap has no error to return it in and, like regexp.MustCompile
// on a bad pattern, panics, naming the key and the tool; the panic comes
// on the first run of any test, before the code ships. A key near no
// untraced tool is not an error: one Tools map may describe the tools of
// several runners, each of which has some of them.
func Wrap(specs Tools, tools []anthropic.BetaTool) []anthropic.BetaTool {
	set := toolspec.Compile(specs, "anthropic")
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if t != nil {
			names = append(names, t.Name())
		}
	}
	if err := specs.Misspelt(names); err != nil {
		panic("agentidemanthropic: Wrap: " + err.Error())
	}
	out := make([]anthropic.BetaTool, len(tools))
	for i, t := range tools {
		out[i] = t
		if t == nil {
			continue
		}
		if e := set.Lookup(t.Name()); e != nil {
			out[i] = &traced{BetaTool: t, spec: e}
		}
	}
	return out
}

// traced is a tool whose Execute goes through the runtime.
type traced struct {
	anthropic.BetaTool
	spec *toolspec.Tool
}

// Execute is the generated wrapper's sequence around one tool call: Begin,
// Start, the tool, Finish, with Recover deferred. A lost acknowledgement
// drops the tool's answer and returns the runtime's error in its place.
func (t *traced) Execute(ctx context.Context, input json.RawMessage) (out []anthropic.BetaToolResultBlockParamContentUnion, err error) {
	if !runtime.Enabled() {
		return t.BetaTool.Execute(ctx, input)
	}
	vals, identity, entity, missing := t.spec.ValuesOf(input)
	c, cctx := runtime.Begin(ctx, t.spec.Op, vals, identity, entity)
	c.IdentityMissing(missing...)
	c.Redact(t.spec.Secrets(input)...)
	if err = c.Start(); err != nil {
		return nil, err
	}
	defer c.Recover(&err)
	out, err = t.BetaTool.Execute(cctx, input)
	var rec any
	if err == nil {
		rec = result(out)
	}
	if lost := c.Finish(err, rec); lost != nil {
		return nil, lost
	}
	return out, err
}

// result is what the trace records of a tool's answer: the text of its
// text blocks (as JSON when it is JSON), other blocks as the SDK encodes
// them, one value when there is one block.
func result(blocks []anthropic.BetaToolResultBlockParamContentUnion) any {
	vals := make([]any, 0, len(blocks))
	for _, b := range blocks {
		switch {
		case b.OfText != nil && json.Valid([]byte(b.OfText.Text)):
			vals = append(vals, json.RawMessage(b.OfText.Text))
		case b.OfText != nil:
			vals = append(vals, b.OfText.Text)
		default:
			vals = append(vals, b)
		}
	}
	if len(vals) == 1 {
		return vals[0]
	}
	return vals
}
