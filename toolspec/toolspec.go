// Package toolspec describes tools that a framework dispatches with JSON
// arguments (MCP servers, Eino tool nodes, ...) to the agentidem runtime:
// read or write, how the logical identity and entity come from the
// arguments, which ops must come first, which arguments never enter a
// trace. The framework adapters (adapters/mcp, adapters/eino,
// adapters/anthropic) share it, so a spec means the same thing whichever
// framework serves the tool.
//
//	tools := toolspec.Tools{
//		"get_payment": toolspec.Read(toolspec.Entity("payment_id")),
//		"refund":      toolspec.Write(toolspec.Identity("payment_id"), toolspec.Redact("card")),
//		"set_status":  toolspec.Write(toolspec.Identity("order_id"), toolspec.Idempotent()),
//	}
//	set := toolspec.Compile(tools, "mcp")
//	t := set.Lookup("refund")
//	args, identity, entity, missing := t.ValuesOf(rawJSON)
//	call, ctx := runtime.Begin(ctx, t.Op, args, identity, entity)
//	call.IdentityMissing(missing...)
package toolspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/agentidem/agentidem-go/internal/jsonnum"
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
	idempotent bool
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
// A name with dots is a path into nested objects: Identity("customer.email")
// takes the email field of the customer argument, {"customer": {"email":
// ...}} (an argument whose own name is "customer.email" comes first).
// A call without one of them (or with null) has no known identity: it is
// left out of duplicate detection and reported as identity_missing, never
// taken for the repeat of another call that lacks it too.
func Identity(args ...string) Option {
	return optionFunc(func(s *Spec) { s.identity = append([]string(nil), args...) })
}

// IdentityFunc computes the logical identity of a write from the decoded
// arguments, decoded as encoding/json decodes into map[string]any, except
// that an integer of magnitude 2^53 or more (a 64-bit id) is the
// json.Number of its decimal digits, however it was written, so that two
// ids never round to one. It must
// be deterministic: a fresh value per call defeats the point.
func IdentityFunc(fn func(args map[string]any) any) Option {
	return optionFunc(func(s *Spec) { s.identityFn = fn })
}

// Entity names the arguments that say what the tool touches, for the
// checks on concurrent calls (a dotted name is a path, as in Identity); a
// write's entity defaults to its identity.
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

// Idempotent declares that a repeat of the write with equal arguments has
// no further effect (an upsert, "set status to X", a create that skips
// what exists), as //agentidem:write ... idempotent does for a Go function
// and MCP's idempotentHint for an MCP tool: the fault suite records such a
// repeat as absorbed, never as a duplicate. Declare it only when it is true
// of the tool: given a State snapshot, the suite checks it, and a repeat
// that changed the world is a not_idempotent finding.
func Idempotent() Option {
	return optionFunc(func(s *Spec) { s.idempotent = true })
}

// Hints are what a framework's own definition of a tool says about it: the
// readOnlyHint and idempotentHint of an MCP tool's annotations. Adapters
// read them from the server's tool definitions, so a tool that declares
// them needs no Spec.
type Hints struct {
	// ReadOnly: the tool does not modify its environment (a read).
	ReadOnly bool
	// Idempotent: a repeat with equal arguments has no additional effect.
	Idempotent bool
}

// Apply returns the Spec of a tool whose definition carries h. With a
// Spec of its own (spec built with Read or Write), that Spec stands and
// the hints only add Idempotent to a write. Without one (the zero Spec),
// the tool is a Read when h.ReadOnly, an idempotent Write whose identity
// is the whole arguments object when h.Idempotent, and otherwise stays
// without a Spec (not traced): the hints' defaults (mcp-go gives every
// tool readOnlyHint=false, idempotentHint=false) say nothing that tells a
// write's identity, so list such a tool in Tools with its Identity.
func (h Hints) Apply(spec Spec) Spec {
	if spec.kind == 0 {
		switch {
		case h.ReadOnly:
			return Read()
		case h.Idempotent:
			spec = Write()
		default:
			return Spec{}
		}
	}
	if spec.kind == runtime.KindWrite && h.Idempotent {
		spec.idempotent = true
	}
	return spec
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
	tools     map[string]*Tool
	framework string

	mu     sync.Mutex
	hinted map[hintKey]*Tool
}

type hintKey struct {
	tool  string
	hints Hints
}

// Lookup returns the compiled tool of that name, or nil when the tool has
// no Spec (it is then not traced).
func (s *Set) Lookup(name string) *Tool {
	if s == nil {
		return nil
	}
	return s.tools[name]
}

// LookupHinted returns the compiled tool of that name as its definition's
// hints describe it (see Hints.Apply), or the plain Lookup when hints
// returns false (the definition carries none). A tool with neither a Spec
// nor hints is nil: not traced. The result is made once per tool and hints.
func (s *Set) LookupHinted(name string, hints func() (Hints, bool)) *Tool {
	if s == nil {
		return nil
	}
	h, ok := Hints{}, false
	if hints != nil {
		h, ok = hints()
	}
	if !ok {
		return s.tools[name]
	}
	k := hintKey{name, h}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.hinted[k]; t != nil {
		return t
	}
	var spec Spec
	if t := s.tools[name]; t != nil {
		spec = t.spec
	}
	spec = h.Apply(spec)
	if spec.kind == 0 {
		return nil
	}
	t := compile(name, spec, s.framework)
	if s.hinted == nil {
		s.hinted = map[hintKey]*Tool{}
	}
	s.hinted[k] = t
	return t
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
	out := &Set{tools: make(map[string]*Tool, len(tools)), framework: framework}
	for _, tool := range names {
		s := tools[tool]
		if s.kind == 0 {
			panic(fmt.Sprintf("toolspec: %s tool %q has a zero Spec: build it with Read or Write", framework, tool))
		}
		out.tools[tool] = compile(tool, s, framework)
	}
	return out
}

// compile makes the op descriptor of one tool.
func compile(tool string, s Spec, framework string) *Tool {
	name := s.name
	if name == "" {
		name = tool
	}
	redactID := false
	for _, a := range append(append([]string(nil), s.identity...), s.entity...) {
		if slices.Contains(s.redact, a) || redactedPath(s.redact, a) {
			redactID = true
		}
	}
	if s.kind == runtime.KindWrite && len(s.identity) == 0 && s.identityFn == nil && len(s.redact) > 0 {
		redactID = true // the identity is the whole arguments object
	}
	return &Tool{spec: s, Op: &runtime.Op{
		Name:           name,
		Kind:           s.kind,
		Params:         []string{"arguments"},
		After:          append([]string(nil), s.after...),
		RedactIdentity: redactID,
		Idempotent:     s.kind == runtime.KindWrite && s.idempotent,
		Pos:            framework + " tool " + tool,
	}}
}

// Values decodes the JSON arguments of a call and returns what
// runtime.Begin records: the arguments (redacted), the identity values and
// the entity values.
func (e *Tool) Values(raw json.RawMessage) (args, identity, entity []any) {
	args, identity, entity, _ = e.ValuesOf(raw)
	return args, identity, entity
}

// redactedPath reports whether the identity or entity path a goes into
// an argument Redact names ("card.number" into a redacted "card"): the
// value it picks is part of a secret, so it is recorded as a digest.
func redactedPath(redact []string, a string) bool {
	for _, r := range redact {
		if strings.HasPrefix(a, r+".") {
			return true
		}
	}
	return false
}

// ValuesOf is Values, and says which of the arguments named by Identity
// were missing from raw (or null): the call's identity is then unknown,
// and the adapter reports it with Call.IdentityMissing, so that two calls
// without the argument (an optional field the model left out) are not
// taken for one write done twice.
func (e *Tool) ValuesOf(raw json.RawMessage) (args, identity, entity []any, missing []string) {
	var m map[string]any
	if len(raw) > 0 {
		var v any
		if decode(raw, &v) == nil {
			m, _ = v.(map[string]any)
		}
	}
	if m == nil && len(raw) > 0 && string(raw) != "null" {
		// Not an object: record it as it came, under its own name.
		var v any
		if decode(raw, &v) == nil {
			return []any{v}, []any{v}, nil, nil
		}
		return []any{string(raw)}, []any{string(raw)}, nil, nil
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
		for i, v := range identity {
			if v == nil {
				missing = append(missing, s.identity[i])
			}
		}
	case s.kind == runtime.KindWrite:
		identity = []any{m}
	}
	switch {
	case s.entityFn != nil:
		entity = []any{s.entityFn(m)}
	case len(s.entity) > 0:
		entity = pick(m, s.entity)
	}
	return args, identity, entity, missing
}

// decode unmarshals JSON arguments into v the way encoding/json does, but
// keeps an integer of magnitude 2^53 or more (a 64-bit id such as
// 1234567890123456789) as the json.Number of its decimal digits: decoded
// as a float64, two different ids would round to one value and share an
// identity. Every other number is a float64, as encoding/json gives it.
func decode(raw []byte, v *any) error {
	if err := decodeLiteral(raw, v); err != nil {
		return err
	}
	*v = numbers(*v)
	return nil
}

// decodeLiteral unmarshals JSON arguments into v the way encoding/json
// does, but keeps every number as the json.Number of its literal.
func decodeLiteral(raw []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("toolspec: trailing data after JSON arguments")
	}
	return nil
}

// numbers replaces each json.Number in v by its float64, unless it is an
// integer of magnitude 2^53 or more, beyond which float64 no longer holds
// every integer: that is the json.Number of its decimal digits, however it
// was written (1234567890123456789, 1234567890123456789.0 and
// 1.234567890123456789e18 are one id; 1152921504606846976, which a float64
// holds but encodes as 1152921504606847000, is not that other id).
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x
		}
		if math.Abs(f) < 1<<53 || math.Trunc(f) != f {
			return f
		}
		if d, ok := jsonnum.IntegerDigits(string(x)); ok {
			return json.Number(d)
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}

// pick returns the values of the named arguments of m, nil for one that is
// missing. A name with dots is also a path into nested objects: a key of m
// spelt exactly so comes first (nothing that named a dotted key before
// paths existed changes), else "customer.email" is the email field of the
// object under customer, and so on down, an exact key winning at every
// level. A path through anything but an object (an array, a string) is
// missing.
func pick(m map[string]any, names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = lookupPath(m, n)
	}
	return out
}

// lookupPath is the value at name in m: see pick.
func lookupPath(m map[string]any, name string) any {
	if v, ok := m[name]; ok {
		return v
	}
	for i := 0; i < len(name); i++ {
		if name[i] != '.' {
			continue
		}
		if sub, ok := m[name[:i]].(map[string]any); ok {
			if v := lookupPath(sub, name[i+1:]); v != nil {
				return v
			}
		}
	}
	return nil
}
