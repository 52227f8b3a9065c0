package runtime

import (
	"encoding/json"
	"reflect"
	"sync"
	"time"
	"unsafe"
)

// The arguments of a call are recorded as they were when it began. A
// wrapper passes them to Begin as they are, and an agent may change what
// they point to afterwards: one request struct reused for every call (as
// a sync.Pool does) would otherwise be read, when repeats are compared and
// when the report is written, with the values of the last call made with
// it, so that two calls with different arguments looked like one repeated
// (a wrong not_idempotent) and the trace showed calls never made. Begin
// therefore replaces, in its own copy of the arguments, each value the
// agent can still change by what it was then (keepArgs). Strings, numbers,
// booleans and structs of them cannot change and are kept as they are:
// the common scalars at the cost of a type switch, a struct at that of a
// cached lookup of its type.

// keepArgs replaces each value of vals, the call's own copy of its
// arguments, that its caller can change after Begin returns by a record of
// what it is now (argAtBegin). It is small enough to be inlined into Begin.
func keepArgs(vals []any) {
	for i, v := range vals {
		switch v.(type) {
		case string, int:
			// The most common arguments, told by a comparison or two
			// (mayChange's longer switch searches: 5 ns an argument).
			continue
		}
		vals[i] = keptArg(v)
	}
}

// keptArg returns what the call records for v: v itself, or, when the
// caller can still change it, a record of what it is now.
func keptArg(v any) any {
	if mayChange(v) {
		return argAtBegin(v)
	}
	return v
}

// mayChange reports whether the caller can change what v encodes to after
// handing it over: v's type holds a pointer, a map, a slice or an
// interface, at any depth of structs and arrays, and v is not itself a nil
// pointer, map or slice. A value boxed in an interface is a copy, so a
// struct or an array of scalars cannot change.
func mayChange(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr,
		float32, float64, complex64, complex128, redacted, json.Number, time.Duration:
		return false // the common arguments, without reflection
	case time.Time:
		// Its *Location is never changed once made: a time is a value,
		// as its documentation says to pass it.
		return false
	}
	if !typeMayChange(reflect.TypeOf(v)) {
		return false
	}
	// A nil pointer, map or slice stays nil: nothing to record.
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		return !rv.IsNil()
	}
	return true
}

// changingTypes caches typeMayChange by type: the answer is a walk over a
// struct's fields, asked again for every call of a tool.
var changingTypes sync.Map // reflect.Type → bool

// typeMayChange reports whether a value of type t can refer to memory its
// holder can change: a pointer, map, slice or interface, at any depth of
// structs and arrays. Channels and funcs are not counted: JSON cannot
// encode them, so they are shown by their type, which does not change.
func typeMayChange(t reflect.Type) bool {
	if m, ok := changingTypes.Load(t); ok {
		return m.(bool)
	}
	m := kindMayChange(t)
	changingTypes.Store(t, m)
	return m
}

func kindMayChange(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return t.Len() > 0 && kindMayChange(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if kindMayChange(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// argAtBegin returns what stands for v, an argument that may change, in
// the call's record:
//
//   - a map[string]any or []any whose leaves cannot change (a framework
//     tool's decoded arguments, toolspec) is copied, so that it keeps its
//     type: updatesConflict (argFields) tells the fields of such an object
//     apart, and a caller reading Operation.Args finds a map as it passed;
//   - any other value is encoded as JSON now, and the json.RawMessage is
//     what every later reader sees: sameArgs compares it, the report
//     writes it (byte for byte what v encoded to, appendValue), and the
//     heuristics that look for names in arguments (madenames.go,
//     commute.go) decode it, as they decoded v's encoding before;
//   - a value JSON cannot encode (a func inside, a cycle), or whose
//     MarshalJSON panics, is kept as it is: the report shows its type
//     alone ("<T: not JSON>"), which does not change, and a panic happens
//     where it happened before, when the value is written.
func argAtBegin(v any) (out any) {
	switch v.(type) {
	case map[string]any, []any:
		if c, ok := copyJSONShaped(v, 0); ok {
			return c
		}
	}
	defer func() {
		if recover() != nil {
			out = v
		}
	}()
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	// json.Marshal compacts, and escapes as appendCanonical does: raw is
	// what appendValue would write for v, and it writes raw unchanged.
	return json.RawMessage(raw)
}

// maxCopyDepth bounds copyJSONShaped: a map that holds itself is left to
// json.Marshal, which reports the cycle.
const maxCopyDepth = 64

// copyJSONShaped copies v, a map[string]any or []any, all the way down
// through the maps and lists it holds; ok is false when a leaf could still
// change (a pointer, a []string) or the nesting is deeper than
// maxCopyDepth.
func copyJSONShaped(v any, depth int) (any, bool) {
	if depth > maxCopyDepth {
		return nil, false
	}
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x, true
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := copyJSONShaped(e, depth+1)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		if x == nil {
			return x, true
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := copyJSONShaped(e, depth+1)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return v, !mayChange(v)
}

// Arg is one argument of a traced call as a generated wrapper hands it to
// BeginArgs. A string or a number travels in it unboxed, and the call
// keeps it in its own memory (Call.strs, the end of Call.canon), so that
// recording it costs no allocation: boxed into the wrapper's []any for
// Begin, every string and every number above 255 was an allocation, the
// only ones of a traced call. Str, Num and Val make one.
type Arg struct {
	typ  unsafe.Pointer // the dynamic type of a Str or a Num
	s    string         // a Str's value
	word uint64         // a Num's value, in its own type's layout
	v    any            // a Val's value
	str  bool           // a Str
}

// Str is the Arg of a string argument, of any type over string.
func Str[T ~string](v T) Arg {
	var zero T // boxing a zero value allocates nothing: for its type only
	return Arg{typ: typeOf(zero), s: string(v), str: true}
}

// Num is the Arg of a number or boolean argument, of any type over one.
func Num[T ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr | ~float32 | ~float64 | ~bool](v T) Arg {
	var zero T
	a := Arg{typ: typeOf(zero)}
	*(*T)(unsafe.Pointer(&a.word)) = v // 8 bytes at most
	return a
}

// Val is the Arg of an argument of any other type, boxed as Begin's
// arguments are.
func Val(v any) Arg { return Arg{v: v} }

// ArgSpan names the arguments args[From:To] of a call, which are its
// identity or its entity (BeginArgs). The zero ArgSpan names none.
type ArgSpan struct{ From, To int }

// Span returns the ArgSpan of args[from:to].
func Span(from, to int) ArgSpan { return ArgSpan{from, to} }

// eface is the layout of an interface value: its dynamic type, and a
// pointer to its value for a type that is not pointer-shaped (as no type
// of a Str or a Num is).
type eface struct {
	typ, data unsafe.Pointer
}

// typeOf returns the dynamic type of v.
func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// packAny returns the interface value of dynamic type typ whose value is
// at p, without copying it: what p points to must never be written again,
// as the value of an interface never changes.
func packAny(typ, p unsafe.Pointer) (v any) {
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, p
	return v
}

// boxed returns a as Begin would have been given it: a Val's value, or a
// Str's or a Num's in memory of its own, as boxing puts it.
func (a *Arg) boxed() any {
	switch {
	case a.typ == nil:
		return a.v
	case a.str:
		p := new(string)
		*p = a.s
		return packAny(a.typ, unsafe.Pointer(p))
	}
	p := new(uint64)
	*p = a.word
	return packAny(a.typ, unsafe.Pointer(p))
}

// of returns the values s names in vals, or nil for the zero ArgSpan.
func (s ArgSpan) of(vals []any) []any {
	if s.To <= s.From {
		return nil
	}
	return vals[s.From:s.To:s.To]
}

// unboxed reports whether the arguments s names in args are all a Str's
// or a Num's, which keepArgs leaves as they are.
func (s ArgSpan) unboxed(args []Arg) bool {
	for i := s.From; i < s.To; i++ {
		if args[i].typ == nil {
			return false
		}
	}
	return true
}
