// Package toolspec describes tools that a framework dispatches with JSON
// arguments (MCP servers, Eino tool nodes, ...) to the agentidem runtime:
// read or write, how the logical identity and entity come from the
// arguments, which ops must come first, which arguments never enter a
// trace. The framework adapters (adapters/mcp, adapters/eino) share it, so a
// spec means the same thing whichever framework serves the tool.
//
//	tools := toolspec.Tools{
//		"get_payment": toolspec.Read(toolspec.Entity("payment_id")),
//		"refund":      toolspec.Write(toolspec.Identity("payment_id"), toolspec.Redact("card")),
//	}
//	set := toolspec.Compile(tools, "mcp")
//	t := set.Lookup("refund")
//	args, identity, entity := t.Values(rawJSON)
//	call, ctx := runtime.Begin(ctx, t.Op, args, identity, entity)
package toolspec

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/agentidem/agentidem-go/runtime"
)

// Tools maps the name of a tool, as the framework calls it, to the Spec that
// says what kind of op it is. A tool missing from the map is served as if no
// adapter were there: it is not traced and gets no faults.
type Tools map[string]Spec

// Spec describes one tool to agentidem: read or write, how its logical
// identity and entity come from the call's JSON arguments, which ops must
// happen before it, and which arguments never enter a trace. Build it with
// Read or Write.
type Spec struct {
	kind       runtime.Kind
	name       string
	identity   []string
	identityFn func(args map[string]any) any
	entity     []string
	entityFn   func(args map[string]any) any
	after      []string
	redact     []string
}

// Option refines a Spec.
type Option interface{ apply(*Spec) }

type optionFunc func(*Spec)

func (f optionFunc) apply(s *Spec) { f(s) }

// Read returns the Spec of a tool without side effects.
func Read(opts ...Option) Spec { return build(runtime.KindRead, opts) }

// Write returns the Spec of a tool with a side effect. Its identity is what
// makes two calls one effect: set it with Identity or IdentityFunc; without
// either, the whole arguments object is the identity.
func Write(opts ...Option) Spec { return build(runtime.KindWrite, opts) }

func build(k runtime.Kind, opts []Option) Spec {
	s := Spec{kind: k}
	for _, o := range opts {
		if o != nil {
			o.apply(&s)
		}
	}
	return s
}

// Identity takes the logical identity of a write from the named arguments,
// in order: Identity("order_id") makes two calls for one order one effect.
func Identity(args ...string) Option {
	return optionFunc(func(s *Spec) { s.identity = append([]string(nil), args...) })
}

// IdentityFunc computes the logical identity of a write from the decoded
// arguments. It must be deterministic: a fresh value per call defeats the
// point.
func IdentityFunc(fn func(args map[string]any) any) Option {
	return optionFunc(func(s *Spec) { s.identityFn = fn })
}

// Entity names the arguments that say what the tool touches, for the
// checks on concurrent calls; a write's entity defaults to its identity.
func Entity(args ...string) Option {
	return optionFunc(func(s *Spec) { s.entity = append([]string(nil), args...) })
}

// EntityFunc computes the entity from the decoded arguments.
func EntityFunc(fn func(args map[string]any) any) Option {
	return optionFunc(func(s *Spec) { s.entityFn = fn })
}

// After declares ops that must happen before this one (by op name):
// dispatching both in one parallel batch is a finding.
func After(ops ...string) Option {
	return optionFunc(func(s *Spec) { s.after = append(s.after, ops...) })
}

// Redact keeps the named arguments out of traces and reports; an identity
// or entity built from them is recorded as a digest.
func Redact(args ...string) Option {
	return optionFunc(func(s *Spec) { s.redact = append(s.redact, args...) })
}

// Name sets the op name used in traces, fault targets and After; the
// default is the tool name.
func Name(name string) Option {
	return optionFunc(func(s *Spec) { s.name = name })
}

// Tool is a tool's compiled Spec: its op descriptor, made once.
type Tool struct {
	// Op is the descriptor to pass to runtime.Begin.
	Op   *runtime.Op
	spec Spec
}

// Set is a compiled Tools map.
type Set struct {
	tools map[string]*Tool
}

// Lookup returns the compiled tool of that name, or nil when the tool has
// no Spec (it is then not traced).
func (s *Set) Lookup(name string) *Tool {
	if s == nil {
		return nil
	}
	return s.tools[name]
}

// Compile turns the Tools into op descriptors, one per tool, once. framework
// names the adapter in op positions ("mcp tool refund"). A zero Spec (not
// built with Read or Write) is programmer misuse and panics.
func Compile(tools Tools, framework string) *Set {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	out := &Set{tools: make(map[string]*Tool, len(tools))}
	for _, tool := range names {
		s := tools[tool]
		if s.kind == 0 {
			panic(fmt.Sprintf("toolspec: %s tool %q has a zero Spec: build it with Read or Write", framework, tool))
		}
		name := s.name
		if name == "" {
			name = tool
		}
		redactID := false
		for _, a := range append(append([]string(nil), s.identity...), s.entity...) {
			if slices.Contains(s.redact, a) {
				redactID = true
			}
		}
		if s.kind == runtime.KindWrite && len(s.identity) == 0 && s.identityFn == nil && len(s.redact) > 0 {
			redactID = true // the identity is the whole arguments object
		}
		out.tools[tool] = &Tool{spec: s, Op: &runtime.Op{
			Name:           name,
			Kind:           s.kind,
			Params:         []string{"arguments"},
			After:          append([]string(nil), s.after...),
			RedactIdentity: redactID,
			Pos:            framework + " tool " + tool,
		}}
	}
	return out
}

// Values decodes the JSON arguments of a call and returns what
// runtime.Begin records: the arguments (redacted), the identity values and
// the entity values.
func (e *Tool) Values(raw json.RawMessage) (args, identity, entity []any) {
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			m = nil
		}
	}
	if m == nil && len(raw) > 0 && string(raw) != "null" {
		// Not an object: record it as it came, under its own name.
		var v any
		if json.Unmarshal(raw, &v) == nil {
			return []any{v}, []any{v}, nil
		}
		return []any{string(raw)}, []any{string(raw)}, nil
	}
	shown := make(map[string]any, len(m))
	for k, v := range m {
		if slices.Contains(e.spec.redact, k) {
			v = runtime.Redacted
		}
		shown[k] = v
	}
	args = []any{shown}
	s := e.spec
	switch {
	case s.identityFn != nil:
		identity = []any{s.identityFn(m)}
	case len(s.identity) > 0:
		identity = pick(m, s.identity)
	case s.kind == runtime.KindWrite:
		identity = []any{m}
	}
	switch {
	case s.entityFn != nil:
		entity = []any{s.entityFn(m)}
	case len(s.entity) > 0:
		entity = pick(m, s.entity)
	}
	return args, identity, entity
}

func pick(m map[string]any, names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = m[n]
	}
	return out
}
