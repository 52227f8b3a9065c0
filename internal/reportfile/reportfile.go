// Package reportfile tells a saved fault-suite report from the other JSON
// that lies about (another tool's file, a golden trace of testkit.Golden)
// before the report is decoded, and says what is wrong with a file that is
// not a report in the terms of its JSON, never of the Go types it was
// decoded into. runtime.ReadReport returns its errors; agentidem-gen
// report uses Error.Foreign to skip, in a directory of reports, a file
// that does not claim to be one.
package reportfile

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Error says that the file at Path is not an agentidem report, and what it
// is instead or what is wrong with it.
type Error struct {
	Path string
	// What is what the file is, or what is wrong with it, as it goes after
	// the path: `not an agentidem report: it has no schema_version`.
	What string
	// Foreign is set when the file is JSON that does not claim to be a
	// report: not an object, or an object without a string schema_version
	// (every report has one), such as a golden trace or another tool's
	// file. A file that claims a version but is not valid JSON or does not
	// decode is not foreign: it is a report that something damaged.
	Foreign bool
	// Golden is set for a golden trace (testkit.Golden).
	Golden bool
}

// Error returns "reading report PATH: WHAT; " and what a report is.
func (e *Error) Error() string {
	hint := "a report is the JSON file that testkit.TestAgent or runtime.Run writes (AGENTIDEM_REPORT_DIR)"
	if e.Golden {
		hint = "the reports are the files testkit writes below $AGENTIDEM_REPORT_DIR"
	}
	return fmt.Sprintf("reading report %s: %s; %s", e.Path, e.What, hint)
}

// Sniff checks that b, the contents of the file at path, claims to be a
// report: a JSON object with a string schema_version, which it returns
// with the object's members. Anything else is an *Error.
func Sniff(path string, b []byte) (version string, members map[string]json.RawMessage, err error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return "", nil, &Error{Path: path, What: "not an agentidem report: the file is empty"}
	}
	var v json.RawMessage
	if err := json.Unmarshal(b, &v); err != nil {
		return "", nil, &Error{Path: path, What: "not an agentidem report: not valid JSON: " + syntax(err)}
	}
	if kind := kindOf(v); kind != "an object" {
		return "", nil, &Error{Path: path, What: "not an agentidem report: it holds " + kind + ", where a report is an object", Foreign: true}
	}
	if err := json.Unmarshal(b, &members); err != nil {
		// Unreachable for a JSON object; said plainly all the same.
		return "", nil, &Error{Path: path, What: "not an agentidem report: " + syntax(err)}
	}
	raw, ok := members["schema_version"]
	if !ok {
		if isGolden(members) {
			return "", nil, &Error{Path: path, What: "a golden trace that testkit.Golden keeps, not a report", Foreign: true, Golden: true}
		}
		return "", nil, &Error{Path: path, What: "not an agentidem report: it has no schema_version", Foreign: true}
	}
	if err := json.Unmarshal(raw, &version); err != nil {
		return "", nil, &Error{Path: path, What: fmt.Sprintf("not an agentidem report: its schema_version is %s (%s), where a report's is a string such as \"2\"", kindOf(raw), raw), Foreign: true}
	}
	return version, members, nil
}

// isGolden reports whether an object is a golden trace as testkit.Golden
// writes it (testkit/golden.go, goldenTrace): {"test", "ordered",
// "invocations"}, and no schema_version.
func isGolden(members map[string]json.RawMessage) bool {
	_, test := members["test"]
	inv, ok := members["invocations"]
	return test && ok && kindOf(inv) == "an array"
}

// Undecodable describes err, from decoding the report at path into the
// runtime's types after Sniff accepted it, as an *Error: where the JSON has
// another type than a report has there, in JSON's words.
func Undecodable(path string, err error) error {
	var te *json.UnmarshalTypeError
	var pe *time.ParseError
	what := err.Error()
	switch {
	case errors.As(err, &te):
		what = strings.Replace(what, te.Error(), describeType(te), 1)
	case errors.As(err, &pe):
		what = "a time is not in RFC 3339 form: " + what
	case strings.HasPrefix(what, "Time.UnmarshalJSON: "):
		what = "a time is not a JSON string"
	}
	return &Error{Path: path, What: "not an agentidem report: " + what}
}

// describeType says where a value has the wrong JSON type, naming the
// place by its JSON field names ("results.trace.operations") and dropping
// the names of the Go types embedded to decode it (runtime's
// report_compat.go embeds plain, plainResult...; no field of a report
// starts with "plain").
func describeType(te *json.UnmarshalTypeError) string {
	var path []string
	for _, seg := range strings.Split(te.Field, ".") {
		if seg != "" && !strings.HasPrefix(seg, "plain") {
			path = append(path, seg)
		}
	}
	value := te.Value
	if value == "bool" {
		value = "boolean"
	}
	what := fmt.Sprintf("a JSON %s, where a report has %s", value, expected(te.Type))
	if len(path) > 0 {
		// Go's path has no array indexes: results.trace is in some result.
		what = fmt.Sprintf("at %s: %s", strings.Join(path, "."), what)
	}
	return what
}

// expected names the JSON type that decodes into t.
func expected(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
		return "a string"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another type"
}

// kindOf names the JSON type of a valid JSON value.
func kindOf(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// syntax words a JSON syntax error with the byte it was found at.
func syntax(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return err.Error()
}
