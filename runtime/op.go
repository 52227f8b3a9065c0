package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync/atomic"
)

// Kind says whether an op reads or writes.
type Kind uint8

const (
	// KindRead is a tool without side effects.
	KindRead Kind = iota + 1
	// KindWrite is a tool with a side effect that has a logical identity.
	KindWrite
)

// String returns "read" or "write".
func (k Kind) String() string {
	switch k {
	case KindRead:
		return "read"
	case KindWrite:
		return "write"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MarshalText encodes the kind as its name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText decodes "read" or "write".
func (k *Kind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "read":
		*k = KindRead
	case "write":
		*k = KindWrite
	default:
		return fmt.Errorf("unknown op kind %q", b)
	}
	return nil
}

// Op describes one annotated tool function. agentidem-gen declares one per
// annotated function (Declare); it is read-only after package
// initialization.
type Op struct {
	// Name is the logical op name used in traces, fault targets and after=.
	Name string
	// Kind is read or write.
	Kind Kind
	// Params names the recorded arguments, in order. A context.Context
	// parameter is not recorded.
	Params []string
	// After lists ops that must happen before this one, by name. Generated
	// code writes an op of another package as "importpath Name", which
	// Declare turns into that op's name. Under a schedule, a call of this
	// op that started before a call of one of them returned, the two in
	// flight together or dispatched in one round of parallel calls, is a
	// dependent_calls_concurrent finding.
	After []string
	// NoError says the function has no error result: the runtime can trace
	// it but cannot make it fail or lose its acknowledgement.
	NoError bool
	// RedactIdentity says the identity or entity uses a redacted
	// parameter: the trace then holds a keyed digest of the canonical
	// identity (HMAC-SHA256 under a random per-process key), which compares
	// equal for equal values within the process and reveals nothing outside
	// it.
	RedactIdentity bool
	// Idempotent says a repeat of the write with equal arguments has no
	// further effect (//agentidem:write ... idempotent, MCP's
	// idempotentHint): the fault suite records such a repeat as absorbed,
	// never as a duplicate. With a State snapshot the world decides
	// instead, and a repeat that changed it is a not_idempotent finding.
	Idempotent bool
	// Pos is the source position of the annotated function, for reports.
	Pos string
	// Pkg is the import path of the package that declares the op, which
	// generated code sets: ops of one name that packages of one test
	// binary declare are renamed after their packages (Declare).
	Pkg string
	// Directive is the annotation the wrapper was generated from, as
	// written (//agentidem:write identity=orderID idempotent). A suite
	// compares it with the annotated file, next to the generated one, and
	// stops before its baseline where they differ: a wrapper generated
	// from an older annotation (idempotent since removed, another
	// identity) would be judged by what the source no longer says
	// (stale.go). Files generated before it was recorded leave it empty,
	// and are not compared.
	Directive string

	// declaredName is Name as declared, before Declare renamed it, and
	// afterRefs the ops After names, as declared (declare.go).
	declaredName string
	afterRefs    []opRef
	genFile      string // the file that called Declare: the generated one
}

// Redacted stands in for the value of a parameter listed in redact=; the
// real value is never recorded (Call.Redact hands it over only so that it
// can be blanked wherever else it shows up).
var Redacted = redacted{}

type redacted struct{}

func (redacted) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// activeRuns counts the runs in progress in this process, the observer and
// the suites watching for late calls (late.go). The inactive path of every
// wrapper is one load of it.
var activeRuns atomic.Int32

// Enabled reports whether any run, observer or unfinished suite (from its
// first scenario to its Report, or until it is garbage collected) is
// active in this process. Generated wrappers call the original function
// directly when it is false.
func Enabled() bool { return activeRuns.Load() != 0 }

// Args is the recorded arguments of a call, encoded as a JSON object in
// parameter order.
//
// The values are what the arguments were when the call began (Begin). A
// string, number, boolean, or struct or array of them is the value passed.
// A value the caller could change afterwards, through a pointer, map,
// slice or interface it holds, is recorded by what it encoded to then: a
// map[string]any or []any (a framework tool's decoded arguments) as a copy,
// anything else as the json.RawMessage of its JSON. A value JSON cannot
// encode is kept as passed and written as a description of its type. Args
// read back from a report hold generic JSON values.
type Args struct {
	Names  []string
	Values []any
}

// MarshalJSON writes {"param": value, ...} in parameter order. A value that
// JSON cannot encode is written as a string describing its type.
func (a Args) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, v := range a.Values {
		if i > 0 {
			b = append(b, ',')
		}
		name := fmt.Sprintf("arg%d", i)
		if i < len(a.Names) {
			name = a.Names[i]
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		b = appendValue(b, v)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads the object back; values become generic JSON values and
// the names keep their order.
func (a *Args) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("args: want a JSON object")
	}
	a.Names, a.Values = nil, nil
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return err
		}
		a.Names = append(a.Names, tok.(string))
		a.Values = append(a.Values, v)
	}
	_, err = dec.Token()
	return err
}

// appendValue writes v as JSON, falling back to a description of its type
// when it cannot be encoded, so that one odd argument never hides a trace.
func appendValue(b []byte, v any) []byte {
	out, err := appendCanonical(b, v)
	if err != nil {
		return appendJSONString(b, fmt.Sprintf("<%T: not JSON>", v))
	}
	return out
}
