package idem

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/agentidem/agentidem-go/runtime"
)

// Key derives an idempotency key from the identity of the work: the hex
// SHA-256 of runtime.Canonical(parts...), the same canonical JSON the
// runtime uses for the identity of a traced write. Build it from what makes
// the work the same work across retries and redeliveries (session,
// scenario, intent, the entity), never from a random value or a clock:
//
//	idem.Key("refund", orderID)        // one refund per order
//	idem.Key("ticket", sessionID, msg) // one ticket per session and message
//
// With one part the hashed text is that part's JSON ("\"refund\""); with
// several it is the JSON array of the parts. Equal values give equal keys in
// any process; map keys are sorted. Key panics, with an "idem:" prefix, when a
// part cannot be encoded as JSON (a func, a channel, cyclic data): that is a
// programming error. Use KeyOf to get an error instead.
func Key(parts ...any) string {
	k, err := KeyOf(parts...)
	if err != nil {
		panic(err.Error())
	}
	return k
}

// KeyOf is Key returning an error instead of panicking when a part cannot be
// canonicalized.
func KeyOf(parts ...any) (string, error) {
	for i, p := range parts {
		if !validUTF8(reflect.ValueOf(p), 0) {
			// JSON writes each invalid byte as U+FFFD: two binary ids
			// (string(idBytes)) gave one key, and one order's refund was
			// answered with another's (a red team's).
			return "", fmt.Errorf("idem: key: part %d holds a string that is not valid UTF-8, which JSON cannot tell from others: encode binary ids with hex or base64", i)
		}
	}
	c, err := runtime.Canonical(parts...)
	if err != nil {
		return "", fmt.Errorf("idem: key: %w", err)
	}
	return hashString(c), nil
}

// Fingerprint returns the fingerprint of a call's params that Do stores with
// a key (Claim.Params, Record.Params): the hex SHA-256 of their canonical
// JSON. A later call with the same key and another fingerprint is
// ErrKeyConflict.
func Fingerprint(params any) (string, error) {
	c, err := runtime.Canonical(params)
	if err != nil {
		return "", fmt.Errorf("idem: params: %w", err)
	}
	return hashString(c), nil
}

func hashString(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// validUTF8 reports whether every string v holds, as itself, an element,
// a map key or a field, a few levels deep, is valid UTF-8. A value that
// writes its own JSON or text is left to it.
func validUTF8(v reflect.Value, depth int) bool {
	if !v.IsValid() || depth > 6 {
		return true
	}
	if v.Type().Implements(jsonMarshaler) || v.Type().Implements(textMarshaler) {
		return true // its own JSON (a binary id that writes itself as hex)
	}
	switch v.Kind() {
	case reflect.String:
		return utf8.ValidString(v.String())
	case reflect.Pointer, reflect.Interface:
		return v.IsNil() || validUTF8(v.Elem(), depth+1)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return true // bytes: base64 in JSON
		}
		for i := range v.Len() {
			if !validUTF8(v.Index(i), depth+1) {
				return false
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if !validUTF8(it.Key(), depth+1) || !validUTF8(it.Value(), depth+1) {
				return false
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && !validUTF8(v.Field(i), depth+1) {
				return false
			}
		}
	}
	return true
}
