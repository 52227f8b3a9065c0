package reportfile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestSniffSaysWhatAFileIsInJSONTerms: every file that is not a report is
// refused with its path and what it is, never with a Go type; the JSON that
// does not claim to be a report is Foreign, what claims to be one is not.
func TestSniffSaysWhatAFileIsInJSONTerms(t *testing.T) {
	for _, c := range []struct {
		body, what      string
		foreign, golden bool
	}{
		{"", "not an agentidem report: the file is empty", false, false},
		{"{not json", "not an agentidem report: not valid JSON: invalid character 'n' looking for beginning of object key string (at byte 2)", false, false},
		{`{"schema_version":"2",`, "not an agentidem report: not valid JSON: unexpected end of JSON input (at byte 22)", false, false},
		{"[]", "not an agentidem report: it holds an array, where a report is an object", true, false},
		{`"str"`, "not an agentidem report: it holds a string, where a report is an object", true, false},
		{"null", "not an agentidem report: it holds null, where a report is an object", true, false},
		{"42", "not an agentidem report: it holds a number, where a report is an object", true, false},
		{"{}", "not an agentidem report: it has no schema_version", true, false},
		{`{"schema_version":2}`, `not an agentidem report: its schema_version is a number (2), where a report's is a string such as "2"`, true, false},
		{`{"test":"TestRefund","ordered":true,"invocations":[[{"op":"refund","kind":"write"}]]}`, "a golden trace that testkit.Golden keeps, not a report", true, true},
	} {
		_, _, err := Sniff("r.json", []byte(c.body))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: %v, want an *Error", c.body, err)
			continue
		}
		if e.What != c.what || e.Foreign != c.foreign || e.Golden != c.golden {
			t.Errorf("%q: %q foreign=%t golden=%t, want %q foreign=%t golden=%t", c.body, e.What, e.Foreign, e.Golden, c.what, c.foreign, c.golden)
		}
		if !strings.HasPrefix(err.Error(), "reading report r.json: "+c.what+"; ") {
			t.Errorf("%q: %q does not name the file and what it is", c.body, err)
		}
	}

	version, members, err := Sniff("r.json", []byte(`{"schema_version":"2","name":"T"}`))
	if err != nil || version != "2" || string(members["name"]) != `"T"` {
		t.Errorf("a report: %q %v %v", version, members, err)
	}
}

// TestUndecodableNamesTheFieldByItsJSONName: a report whose field has
// another JSON type than a report's is described by the field's JSON path,
// not by the Go types the runtime decodes it into (".plain.results of type
// []*runtime.Result").
func TestUndecodableNamesTheFieldByItsJSONName(t *testing.T) {
	var v struct{ plain }
	for body, want := range map[string]string{
		`{"results":"x"}`:              "not an agentidem report: at results: a JSON string, where a report has an array",
		`{"results":["x"]}`:            "not an agentidem report: at results: a JSON string, where a report has an object",
		`{"results":[{"kind":3}]}`:     "not an agentidem report: at results.kind: a JSON number, where a report has a string",
		`{"results":[{"count":true}]}`: "not an agentidem report: at results.count: a JSON boolean, where a report has a number",
	} {
		err := json.Unmarshal([]byte(body), &v)
		if err == nil {
			t.Fatalf("%s decoded", body)
		}
		var e *Error
		if !errors.As(Undecodable("r.json", err), &e) || e.What != want || e.Foreign {
			t.Errorf("%s: %+v, want %q", body, e, want)
		}
	}
}

// plain is embedded as the runtime's report types embed their aliases
// (report_compat.go), which Go's error names in its path.
type plain struct {
	Results []struct {
		Kind  kind `json:"kind"`
		Count int  `json:"count"`
	} `json:"results"`
}

// kind decodes from a string, as runtime.Kind does.
type kind int

func (k *kind) UnmarshalText([]byte) error { return nil }
