package audit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// sp describes a span for tests; times are milliseconds after t0.
type sp struct {
	trace, span, parent              string
	op, kind, id, entity, args, site string
	status, key                      string
	after                            []string
	replayed, idempotent             bool
	start, end                       int
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func hexID(s string, n int) string {
	h := fmt.Sprintf("%x", s)
	if len(h) > n {
		return h[:n]
	}
	return strings.Repeat("0", n-len(h)) + h
}

func (s sp) ids() (trace, span, parent string) {
	trace, span = hexID(s.trace, 32), hexID(s.span, 16)
	if s.parent != "" {
		parent = hexID(s.parent, 16)
	}
	return
}

func (s sp) attrs() [][2]any {
	key := s.key
	if key == "" {
		key = "k1"
	}
	a := [][2]any{{"agentidem.op", s.op}, {"agentidem.kind", s.kind}, {"agentidem.key_id", key}}
	for _, kv := range [][2]string{{"agentidem.identity.digest", s.id}, {"agentidem.entity.digest", s.entity},
		{"agentidem.args.digest", s.args}, {"agentidem.site", s.site}, {"agentidem.status", s.status}} {
		if kv[1] != "" {
			a = append(a, [2]any{kv[0], kv[1]})
		}
	}
	if s.after != nil {
		a = append(a, [2]any{"agentidem.after", s.after})
	}
	a = append(a, [2]any{"agentidem.replayed", s.replayed})
	if s.idempotent {
		a = append(a, [2]any{"agentidem.idempotent", true})
	}
	return a
}

func (s sp) times() (time.Time, time.Time) {
	return t0.Add(time.Duration(s.start) * time.Millisecond), t0.Add(time.Duration(s.end) * time.Millisecond)
}

// otlp is the span as one line of the Collector's file exporter.
func otlp(spans ...sp) string {
	var out []map[string]any
	for _, s := range spans {
		tr, id, parent := s.ids()
		st, en := s.times()
		var attrs []map[string]any
		for _, kv := range s.attrs() {
			var v map[string]any
			switch x := kv[1].(type) {
			case string:
				v = map[string]any{"stringValue": x}
			case bool:
				v = map[string]any{"boolValue": x}
			case []string:
				var vals []map[string]any
				for _, e := range x {
					vals = append(vals, map[string]any{"stringValue": e})
				}
				v = map[string]any{"arrayValue": map[string]any{"values": vals}}
			}
			attrs = append(attrs, map[string]any{"key": kv[0], "value": v})
		}
		code := 0
		if s.status == "failed" {
			code = 2
		}
		out = append(out, map[string]any{"traceId": tr, "spanId": id, "parentSpanId": parent, "name": s.op, "kind": 1,
			"startTimeUnixNano": fmt.Sprint(st.UnixNano()), "endTimeUnixNano": fmt.Sprint(en.UnixNano()),
			"attributes": attrs, "status": map[string]any{"code": code}})
	}
	b, _ := json.Marshal(map[string]any{"resourceSpans": []any{map[string]any{
		"resource":   map[string]any{"attributes": []any{map[string]any{"key": "service.name", "value": map[string]any{"stringValue": "agent"}}}},
		"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "github.com/agentidem/agentidem-go/otel"}, "spans": out}}}}})
	return string(b)
}

// stdout is the span as the SDK's stdouttrace exporter writes it.
func stdout(s sp, indent bool) string {
	tr, id, parent := s.ids()
	if parent == "" {
		parent = strings.Repeat("0", 16)
	}
	st, en := s.times()
	var attrs []map[string]any
	for _, kv := range s.attrs() {
		typ := "STRING"
		switch kv[1].(type) {
		case bool:
			typ = "BOOL"
		case []string:
			typ = "STRINGSLICE"
		}
		attrs = append(attrs, map[string]any{"Key": kv[0], "Value": map[string]any{"Type": typ, "Value": kv[1]}})
	}
	code := "Unset"
	if s.status == "failed" {
		code = "Error"
	}
	m := map[string]any{"Name": s.op, "SpanContext": map[string]any{"TraceID": tr, "SpanID": id, "TraceFlags": "01"},
		"Parent": map[string]any{"TraceID": tr, "SpanID": parent}, "SpanKind": 1, "StartTime": st, "EndTime": en,
		"Attributes": attrs, "Events": nil, "Status": map[string]any{"Code": code, "Description": ""},
		"InstrumentationScope": map[string]any{"Name": "github.com/agentidem/agentidem-go/otel"}}
	var b []byte
	if indent {
		b, _ = json.MarshalIndent(m, "", "\t")
	} else {
		b, _ = json.Marshal(m)
	}
	return string(b)
}

// audit runs the reader and the auditor over text.
func audit(t *testing.T, text string) *Result {
	t.Helper()
	a := New(Config{})
	var st Stats
	if err := Read("in.jsonl", strings.NewReader(text), &st, func(s *Span) error { a.Add(s); return nil }); err != nil {
		t.Fatal(err)
	}
	return a.Result(st)
}

// both audits the spans written in each format and checks they agree.
func both(t *testing.T, spans ...sp) *Result {
	t.Helper()
	var a, b []string
	for _, s := range spans {
		a = append(a, otlp(s))
		b = append(b, stdout(s, false))
	}
	ra, rb := audit(t, strings.Join(a, "\n")+"\n"), audit(t, strings.Join(b, "\n")+"\n")
	if ra.Stats.Ours != len(spans) || rb.Stats.Ours != len(spans) {
		t.Fatalf("read %d (otlp) and %d (stdout) spans, want %d; problems %v %v", ra.Stats.Ours, rb.Stats.Ours, len(spans), ra.Stats.Problems, rb.Stats.Problems)
	}
	if codes(ra) != codes(rb) {
		t.Fatalf("the formats disagree: %s vs %s", codes(ra), codes(rb))
	}
	return ra
}

func codes(r *Result) string {
	var c []string
	for _, f := range r.Findings {
		c = append(c, f.Code)
	}
	return strings.Join(c, ",")
}
