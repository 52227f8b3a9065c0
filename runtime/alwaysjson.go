package runtime

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sync"
)

// alwaysJSON reports whether encoding/json encodes every value of type t
// without an error, as far as the type alone shows: booleans, integers and
// strings, and arrays, slices, maps (keyed by a string or an integer) and
// structs made of them. A float may be NaN, an interface or a pointer may
// hold anything (a cycle, a channel), and a type with a method of its own
// (json.Marshaler, encoding.TextMarshaler) may fail: none of those is
// always encodable, nor is a type that refers to itself (a slice may hold
// its own array). The answer is kept per type: a tool returns values of
// the same few types call after call, and encodable then skips encoding a
// result to learn that it encodes (a refund agent's payment, a struct, in
// every scenario: the encoding was 9.6% of its suite's CPU profile,
// GOMAXPROCS=1).
func alwaysJSON(t reflect.Type) bool {
	if v, ok := alwaysJSONTypes.Load(t); ok {
		return v.(bool)
	}
	ok := alwaysJSONWalk(t, map[reflect.Type]bool{})
	alwaysJSONTypes.Store(t, ok)
	return ok
}

// alwaysJSONTypes holds alwaysJSON's answers, by reflect.Type.
var alwaysJSONTypes sync.Map

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// alwaysJSONWalk is alwaysJSON without the cache; seen holds the types on
// the way to t, so that a type that refers to itself is not always
// encodable.
func alwaysJSONWalk(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	case reflect.Array, reflect.Slice:
		seen[t] = true
		defer delete(seen, t)
		return alwaysJSONWalk(t.Elem(), seen)
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			return false
		}
		if k := t.Key(); k.Implements(textMarshalerType) || reflect.PointerTo(k).Implements(textMarshalerType) {
			return false
		}
		seen[t] = true
		defer delete(seen, t)
		return alwaysJSONWalk(t.Elem(), seen)
	case reflect.Struct:
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue // encoding/json never reads it
			}
			if !alwaysJSONWalk(f.Type, seen) {
				return false
			}
		}
		return true
	}
	return false
}
