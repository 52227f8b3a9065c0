package runtime

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Canonical returns the canonical form of a logical identity: deterministic
// JSON of the value, or of the list of values when there are several. Maps
// are written with sorted keys and struct fields in declaration order, so two
// evaluations of the same identity expression over equal values give the same
// string, in any process. Values that JSON cannot encode (funcs, channels,
// cyclic data) are an error.
//
// Canonical(x) for one value is the JSON of x; Canonical(a, b) is the JSON
// array [a, b]. Canonical() is "[]".
func Canonical(vals ...any) (string, error) {
	if len(vals) == 1 {
		if s, ok := vals[0].(string); ok && plainString(s) {
			return `"` + s + `"`, nil // the common case, in one allocation
		}
	}
	b, err := appendCanonicalList(make([]byte, 0, 32), vals)
	if err != nil && len(vals) != 1 {
		return "", err
	}
	return string(b), err
}

// appendCanonicalList appends what Canonical returns for vals. On an error
// for one value it appends what was written before the error; for several
// values the result is then to be discarded.
func appendCanonicalList(b []byte, vals []any) ([]byte, error) {
	if len(vals) == 1 {
		return appendCanonical(b, vals[0])
	}
	b = append(b, '[')
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendCanonical(b, v); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendCanonical appends the canonical JSON of v. Common scalar types take a
// path without reflection; everything else goes through encoding/json, whose
// output is deterministic (sorted map keys) and compact.
func appendCanonical(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	}
	// encoding/json's output has no space to compact: it compacts what a
	// json.Marshaler writes too.
	raw, err := json.Marshal(v)
	if err != nil {
		return b, fmt.Errorf("identity value of type %T cannot be canonicalized: %w", v, err)
	}
	return append(b, raw...), nil
}

// jsonPlain says which bytes encoding/json writes as they are in a
// string: printable ASCII, and not '"', '\\', '<', '>' or '&'. A byte
// from utf8.RuneSelf on starts a rune, which appendJSONString decodes.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString writes s as encoding/json would (HTML-safe escaping
// included), so the fast path and the reflective path agree byte for byte.
// Most strings of a report or an identity have nothing to escape: their
// bytes are looked up one table read each and appended in one piece.
func appendJSONString(b []byte, s string) []byte {
	i := 0
	for i < len(s) && jsonPlain[s[i]] {
		i++
	}
	b = append(b, '"')
	if i == len(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	return appendJSONStringFrom(b, s, i)
}

// appendJSONStringFrom escapes s from i on, the bytes before i plain,
// after the opening quote, and closes it.
func appendJSONStringFrom(b []byte, s string, i int) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i < len(s) {
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainString reports whether s encodes as itself between quotes: printable
// ASCII with nothing JSON or HTML-safe escaping would change.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
