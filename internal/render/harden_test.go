package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestBidiControlsAreEscaped: U+202E and the other bidi controls from a
// trace are shown as \uXXXX in text and HTML, never passed through (issue
// 12.11).
func TestBidiControlsAreEscaped(t *testing.T) {
	hr := hostileReport()
	spoof := "pay \u202eTNUOMA\u202c 100 \u2066x\u2069 \u200f"
	res := hr.Results[0]
	res.Trace.Ops[1].Result = map[string]any{"note": spoof}
	res.Trace.Ops[1].Args.Values[0] = spoof
	res.Trace.Ops[1].Error = spoof
	res.Findings[0].Message = spoof
	hr.Findings[0].Message = spoof
	res.Error = spoof

	var html bytes.Buffer
	if err := HTML(&html, hr); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": Text(hr), "html": html.String()} {
		if i := strings.IndexFunc(out, isBidi); i >= 0 {
			t.Errorf("%s output holds bidi control %U at byte %d: %q", name, []rune(out[i:])[0], i, out[max(0, i-40):min(len(out), i+40)])
		}
		if !strings.Contains(out, `\u202e`) {
			t.Errorf("%s output does not show the override escaped as \\u202e", name)
		}
	}
}

// TestDeepResultRendersLinearly: a result nested 9,000 deep (a 27 KB
// report) renders to a page of about its size, not one whose indentation
// grows with the square of the depth (162 MB before; issue 12.11).
func TestDeepResultRendersLinearly(t *testing.T) {
	const depth = 9000
	raw := strings.Repeat(`{"a":`, depth) + `1` + strings.Repeat(`}`, depth)
	var deep any
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&deep); err != nil {
		t.Fatal(err)
	}
	hr := hostileReport()
	hr.Results[0].Trace.Ops[1].Result = deep
	hr.Results[0].Trace.Ops[1].Args.Values[1] = deep
	var html bytes.Buffer
	if err := HTML(&html, hr); err != nil {
		t.Fatal(err)
	}
	if html.Len() > 4<<20 {
		t.Fatalf("HTML of a report with a %d-deep result is %d bytes; want it to grow linearly (under 4 MB)", depth, html.Len())
	}
	text := Text(hr)
	if len(text) > 4<<20 {
		t.Fatalf("text of a report with a %d-deep result is %d bytes", depth, len(text))
	}
}

// TestIndentJSON: shallow JSON is indented as json.Indent does; deeper
// than maxIndentDepth it stays compact; the output is valid JSON.
func TestIndentJSON(t *testing.T) {
	var want bytes.Buffer
	in := `{"a":[1,{"b":"x,\"y\":[z]"},[],{}],"c":null}`
	if err := json.Indent(&want, []byte(in), "", "  "); err != nil {
		t.Fatal(err)
	}
	if got := indentJSON(in); got != want.String() {
		t.Errorf("indentJSON(%s) =\n%s\nwant\n%s", in, got, want.String())
	}
	deep := strings.Repeat(`[`, 40) + `1,2` + strings.Repeat(`]`, 40)
	got := indentJSON(deep)
	if !json.Valid([]byte(got)) {
		t.Fatalf("indentJSON of deep JSON is not valid JSON: %s", got)
	}
	if n := strings.Count(got, "\n"); n != 2*maxIndentDepth {
		t.Errorf("deep JSON got %d line breaks; want %d (only the first %d levels indented)", n, 2*maxIndentDepth, maxIndentDepth)
	}
	if got := indentJSON(`{"a":`); got != `{"a":` {
		t.Errorf("invalid JSON changed: %q", got)
	}
}
