package audit

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func read(t *testing.T, text string) (Stats, []*Span) {
	t.Helper()
	var st Stats
	var spans []*Span
	require.NoError(t, Read("in.jsonl", strings.NewReader(text), &st, func(s *Span) error { spans = append(spans, s); return nil }))
	return st, spans
}

func TestReadBothFormats(t *testing.T) {
	s := refund("t1", "s1", "hmac-sha256:aa", "success", 0, 10)
	s.after = []string{"a", "b"}
	s.parent = "p"
	for name, text := range map[string]string{
		"collector file exporter": otlp(s),
		"stdouttrace":             stdout(s, false),
		"stdouttrace indented":    stdout(s, true),
		"windows line ends":       strings.ReplaceAll(stdout(s, true), "\n", "\r\n"),
	} {
		t.Run(name, func(t *testing.T) {
			st, spans := read(t, text+"\n")
			require.Len(t, spans, 1, "%+v", st)
			got := spans[0]
			assert.Equal(t, hexID("t1", 32), got.TraceID)
			assert.Equal(t, hexID("s1", 16), got.SpanID)
			assert.Equal(t, hexID("p", 16), got.Parent)
			assert.Equal(t, "refund", got.Op)
			assert.Equal(t, "write", got.Kind)
			assert.Equal(t, "hmac-sha256:aa", got.Identity)
			assert.Equal(t, "success", got.Status)
			assert.Equal(t, "agent.go:10", got.Site)
			assert.Equal(t, []string{"a", "b"}, got.After)
			assert.Equal(t, t0, got.Start)
			assert.Equal(t, "in.jsonl:1", got.Pos)
			assert.Zero(t, st.Bad)
		})
	}
}

func TestReadSkipsAndCountsBadInput(t *testing.T) {
	good := otlp(refund("t1", "s1", "x", "success", 0, 10))
	foreign := strings.ReplaceAll(good, "agentidem.op", "http.route")
	text := strings.Join([]string{
		good[:len(good)/2],                       // 1: truncated line
		good,                                     // 2
		"not json at all",                        // 3
		`{"resourceSpans": [{"scopeSpans": 7}]}`, // 4: wrong type
		`{"kind":"something else"}`,              // 5: another schema
		foreign,                                  // 6: a span without our attributes
		``,                                       // 7
		good + ` trailing`,                       // 8
		`{"Name":"x","SpanContext":{"TraceID":"zz","SpanID":"1"},"Attributes":[{"Key":"agentidem.op","Value":{"Type":"STRING","Value":"refund"}}]}`, // 9: bad ids
		`{"Name":"x","SpanContext":{"TraceID":"00","SpanID":"1"},"Attributes":[{"Key":"agentidem.op","Value":{"Type":"STRING","Value":7}}]}`,        // 10: bad attribute
		good[:len(good)-3], // 11: truncated at the end of the file
	}, "\n")
	st, spans := read(t, text)
	assert.Len(t, spans, 2, "the two good lines")
	assert.Equal(t, "in.jsonl:2", spans[0].Pos)
	assert.Equal(t, "in.jsonl:8", spans[1].Pos)
	assert.Equal(t, 1, st.Foreign)
	assert.Equal(t, 1, st.OtherSchema)
	want := []string{
		"in.jsonl:1: truncated JSON object",
		`in.jsonl:3: not a JSON object: "not json at all"`,
		"in.jsonl:4:35: json: cannot unmarshal number",
		"in.jsonl:5: a JSON object that is neither OTLP JSON",
		"in.jsonl:8:",
		"text after the JSON object",
		"in.jsonl:9: span of refund has no valid trace id",
		"in.jsonl:10: span 1: attribute agentidem.op",
		"in.jsonl:11: truncated JSON object at the end of the file",
	}
	all := strings.Join(st.Problems, "\n")
	for _, w := range want {
		assert.Contains(t, all, w)
	}
	assert.Equal(t, 7, st.Bad, all)
}

func TestReadHugeLineIsBounded(t *testing.T) {
	text := `{"resourceSpans":[],"pad":"` + strings.Repeat("x", 1<<20) + `"}` + "\n" + otlp(refund("t1", "s1", "x", "success", 0, 10))
	st, spans := read(t, text)
	assert.Len(t, spans, 1)
	assert.Zero(t, st.Bad)
}

func FuzzRead(f *testing.F) {
	s := refund("t1", "s1", "x", "success", 0, 10)
	s.after = []string{"a"}
	f.Add(otlp(s))
	f.Add(stdout(s, false))
	f.Add(stdout(s, true))
	f.Add(otlp(s)[:50] + "\n" + stdout(s, false))
	f.Add(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"` + "\n}")
	f.Add("{\"a\":\"\\\"}\n{}")
	f.Fuzz(func(t *testing.T, text string) {
		var st Stats
		a := New(Config{})
		n := 0
		err := Read("fuzz", strings.NewReader(text), &st, func(s *Span) error {
			n++
			if s.Op == "" || !isHex(s.TraceID, 32) {
				t.Fatalf("passed a span without op or trace id: %+v", s)
			}
			a.Add(s)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != st.Ours || st.Ours > st.Spans {
			t.Fatalf("counted %d ours of %d spans, passed %d", st.Ours, st.Spans, n)
		}
		for _, p := range st.Problems {
			if !strings.HasPrefix(p, "fuzz:") || !utf8.ValidString(p) && utf8.ValidString(text) {
				t.Fatalf("problem without position: %q", p)
			}
		}
		a.Result(st).Report("fuzz", "agentidem-gen audit fuzz", t0, 0)
	})
}
