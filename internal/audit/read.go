package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// MaxObject is the largest JSON object the reader decodes (a Collector line
// holds a whole batch of spans). A larger object is skipped and counted.
const MaxObject = 64 << 20

// Span is one span of an exported trace, with the agentidem attributes
// decoded. Spans without agentidem.op are counted and dropped by Read.
type Span struct {
	TraceID string
	SpanID  string
	// Parent is the parent span's id, "" for a root span.
	Parent string
	Name   string
	Start  time.Time
	End    time.Time

	Op         string
	Kind       string // "read" or "write"
	Identity   string
	Entity     string
	Args       string
	KeyID      string
	After      []string
	Site       string
	Status     string // "success", "failed", or "" when the span has none
	Replayed   bool
	Idempotent bool
	// StatusError is the span status Error; Message its description.
	StatusError bool
	Message     string

	// Pos is where the span was read: file:line of the object it is in.
	Pos string
}

// Stats counts what the reader saw.
type Stats struct {
	// Objects is the number of JSON objects decoded.
	Objects int
	// Spans counts the spans in them; Ours those with agentidem attributes.
	Spans, Ours int
	// Foreign counts spans without agentidem.op (other instrumentation).
	Foreign int
	// OtherSchema counts objects that are neither OTLP JSON nor stdouttrace.
	OtherSchema int
	// Bad counts skipped input: malformed or truncated objects, text
	// outside objects, spans whose agentidem attributes do not decode.
	Bad int
	// Problems lists the first problems, each "file:line[:col]: what".
	Problems []string
}

// maxProblems bounds the problems Stats keeps; the rest are only counted.
const maxProblems = 20

func (s *Stats) problem(format string, args ...any) {
	s.Bad++
	if len(s.Problems) < maxProblems {
		s.Problems = append(s.Problems, fmt.Sprintf(format, args...))
	}
}

// Read streams the spans of one exported file to fn: OTLP JSON as the
// OpenTelemetry Collector's file exporter writes it (one
// {"resourceSpans":[...]} object per line) and the Go SDK's stdouttrace
// exporter (one span object per line, or indented). Both may be mixed. Bad
// input is skipped and counted in st with its position; Read fails only when
// r fails or fn returns an error. Memory is bounded by the largest object.
func Read(name string, r io.Reader, st *Stats, fn func(*Span) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var (
		obj      []byte // the object being assembled
		startLn  int    // its first line
		depth    int
		inStr    bool
		esc      bool
		tooLarge bool
		line     int
	)
	reset := func() { obj, depth, inStr, esc, tooLarge = obj[:0], 0, false, false, false }
	for {
		text, err := readLine(br)
		if len(text) == 0 && err != nil {
			if err != io.EOF {
				return fmt.Errorf("%s:%d: %w", name, line+1, err)
			}
			break
		}
		line++
		if depth > 0 && len(text) > 0 && text[0] == '{' {
			// A new top-level object where the last one was still
			// open: that one was cut short (a truncated line).
			st.problem("%s:%d: truncated JSON object (skipped)", name, startLn)
			reset()
		}
		if depth == 0 {
			t := bytes.TrimSpace(text)
			if len(t) == 0 {
				continue
			}
			if t[0] != '{' {
				st.problem("%s:%d: not a JSON object: %s (skipped)", name, line, excerpt(t))
				continue
			}
			startLn = line
		}
		for i, c := range text {
			switch {
			case esc:
				esc = false
			case inStr:
				if c == '\\' {
					esc = true
				} else if c == '"' {
					inStr = false
				}
			case c == '"':
				inStr = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
			}
			if depth == 0 && !inStr {
				// The object ends at text[i]; anything after it on the
				// line is junk.
				if !tooLarge {
					obj = append(obj, text[:i+1]...)
					if err := decode(name, startLn, obj, st, fn); err != nil {
						return err
					}
				} else {
					st.problem("%s:%d: JSON object larger than %d MiB (skipped)", name, startLn, MaxObject>>20)
				}
				if rest := bytes.TrimSpace(text[i+1:]); len(rest) > 0 {
					st.problem("%s:%d:%d: text after the JSON object: %s (skipped)", name, line, i+2, excerpt(rest))
				}
				reset()
				break
			}
		}
		if depth > 0 {
			if len(obj)+len(text) > MaxObject {
				tooLarge = true
				obj = obj[:0]
			} else if !tooLarge {
				obj = append(obj, text...)
				obj = append(obj, '\n')
			}
		}
		if err == io.EOF {
			break
		}
	}
	if depth > 0 {
		st.problem("%s:%d: truncated JSON object at the end of the file (skipped)", name, startLn)
	}
	return nil
}

// readLine returns the next line without its newline; a line longer than the
// reader's buffer is assembled.
func readLine(br *bufio.Reader) ([]byte, error) {
	b, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		buf := append([]byte(nil), b...)
		for err == bufio.ErrBufferFull {
			b, err = br.ReadSlice('\n')
			buf = append(buf, b...)
			if len(buf) > MaxObject+1 {
				// Keep reading to the end of the line but stop growing:
				// the object is over the limit anyway.
				buf = buf[:MaxObject+1]
			}
		}
		b = buf
	}
	return bytes.TrimRight(b, "\r\n"), err
}

func excerpt(b []byte) string {
	if len(b) > 40 {
		return strconv.Quote(string(b[:40])) + "..."
	}
	return strconv.Quote(string(b))
}

// object is the union of the two formats' top levels.
type object struct {
	// OTLP JSON (Collector file exporter).
	ResourceSpans []struct {
		ScopeSpans []struct {
			Spans []otlpSpan `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`

	// stdouttrace.
	Name        *string `json:"Name"`
	SpanContext *struct {
		TraceID string `json:"TraceID"`
		SpanID  string `json:"SpanID"`
	} `json:"SpanContext"`
	Parent *struct {
		SpanID string `json:"SpanID"`
	} `json:"Parent"`
	StartTime  time.Time `json:"StartTime"`
	EndTime    time.Time `json:"EndTime"`
	Attributes []struct {
		Key   string `json:"Key"`
		Value struct {
			Type  string          `json:"Type"`
			Value json.RawMessage `json:"Value"`
		} `json:"Value"`
	} `json:"Attributes"`
	Status *struct {
		Code        string `json:"Code"`
		Description string `json:"Description"`
	} `json:"Status"`
}

type otlpSpan struct {
	TraceID    string          `json:"traceId"`
	SpanID     string          `json:"spanId"`
	Parent     string          `json:"parentSpanId"`
	Name       string          `json:"name"`
	Start      json.RawMessage `json:"startTimeUnixNano"`
	End        json.RawMessage `json:"endTimeUnixNano"`
	Attributes []otlpKV        `json:"attributes"`
	Status     struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	} `json:"status"`
}

type otlpKV struct {
	Key   string   `json:"key"`
	Value otlpAnyV `json:"value"`
}

type otlpAnyV struct {
	StringValue *string         `json:"stringValue"`
	BoolValue   *bool           `json:"boolValue"`
	IntValue    json.RawMessage `json:"intValue"`
	ArrayValue  *struct {
		Values []otlpAnyV `json:"values"`
	} `json:"arrayValue"`
}

// decode reads one object and hands its agentidem spans to fn.
func decode(name string, line int, b []byte, st *Stats, fn func(*Span) error) error {
	var o object
	if err := json.Unmarshal(b, &o); err != nil {
		st.problem("%s: %v (skipped)", position(name, line, b, err), err)
		return nil
	}
	st.Objects++
	pos := name + ":" + strconv.Itoa(line)
	switch {
	case o.ResourceSpans != nil:
		for _, rs := range o.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for i := range ss.Spans {
					if err := emit(st, pos, fromOTLP(&ss.Spans[i]), fn); err != nil {
						return err
					}
				}
			}
		}
	case o.SpanContext != nil && o.Name != nil:
		return emit(st, pos, fromStdout(&o), fn)
	default:
		st.OtherSchema++
		if st.OtherSchema == 1 && len(st.Problems) < maxProblems {
			st.Problems = append(st.Problems, pos+": a JSON object that is neither OTLP JSON (resourceSpans) nor a stdouttrace span (skipped; others like it are only counted)")
		}
	}
	return nil
}

// emit counts s and passes it on when it carries agentidem attributes.
func emit(st *Stats, pos string, s spanOrErr, fn func(*Span) error) error {
	st.Spans++
	if s.err != nil {
		st.problem("%s: span %s: %v (skipped)", pos, s.span.SpanID, s.err)
		return nil
	}
	if s.span.Op == "" {
		st.Foreign++
		return nil
	}
	if s.span.Entity == "" && s.span.Kind == "write" {
		s.span.Entity = s.span.Identity // a write's entity defaults to its identity
	}
	if !isHex(s.span.TraceID, 32) || !isHex(s.span.SpanID, 16) {
		st.problem("%s: span of %s has no valid trace id and span id (%q, %q) (skipped)", pos, s.span.Op, s.span.TraceID, s.span.SpanID)
		return nil
	}
	st.Ours++
	s.span.Pos = pos
	return fn(s.span)
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

type spanOrErr struct {
	span *Span
	err  error
}

// position turns a decoding error into file:line:col inside the object.
func position(name string, line int, b []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	// The error is at the last byte read, b[off-1].
	if off < 1 || off > int64(len(b)) {
		return name + ":" + strconv.Itoa(line)
	}
	pre := b[:off-1]
	ln := line + bytes.Count(pre, []byte{'\n'})
	col := len(pre) - bytes.LastIndexByte(pre, '\n')
	return name + ":" + strconv.Itoa(ln) + ":" + strconv.Itoa(col)
}

func fromOTLP(sp *otlpSpan) spanOrErr {
	s := &Span{TraceID: strings.ToLower(sp.TraceID), SpanID: strings.ToLower(sp.SpanID), Parent: parentID(sp.Parent), Name: sp.Name, Message: sp.Status.Message}
	start, err1 := unixNano(sp.Start)
	end, err2 := unixNano(sp.End)
	s.Start, s.End = start, end
	code := strings.Trim(string(sp.Status.Code), `"`)
	s.StatusError = code == "2" || code == "STATUS_CODE_ERROR"
	for _, kv := range sp.Attributes {
		v := kv.Value
		switch {
		case v.StringValue != nil:
			setString(s, kv.Key, *v.StringValue)
		case v.BoolValue != nil:
			setBool(s, kv.Key, *v.BoolValue)
		case v.ArrayValue != nil && kv.Key == attrAfter:
			for _, e := range v.ArrayValue.Values {
				if e.StringValue != nil {
					s.After = append(s.After, *e.StringValue)
				}
			}
		}
	}
	if s.Op != "" {
		if err := errors.Join(err1, err2); err != nil {
			return spanOrErr{s, err}
		}
	}
	return spanOrErr{span: s}
}

// parentID normalizes a parent span id: "" for none (the all-zero id).
func parentID(s string) string {
	s = strings.ToLower(s)
	if strings.Trim(s, "0") == "" {
		return ""
	}
	return s
}

func unixNano(raw json.RawMessage) (time.Time, error) {
	t := strings.Trim(string(raw), `"`)
	if t == "" {
		return time.Time{}, errors.New("no start or end time")
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad time %s", excerpt(raw))
	}
	return time.Unix(0, n).UTC(), nil
}

func fromStdout(o *object) spanOrErr {
	s := &Span{TraceID: strings.ToLower(o.SpanContext.TraceID), SpanID: strings.ToLower(o.SpanContext.SpanID),
		Name: *o.Name, Start: o.StartTime, End: o.EndTime}
	if o.Parent != nil {
		s.Parent = parentID(o.Parent.SpanID)
	}
	if o.Status != nil {
		s.StatusError = o.Status.Code == "Error"
		s.Message = o.Status.Description
	}
	for _, a := range o.Attributes {
		if !strings.HasPrefix(a.Key, "agentidem.") {
			continue
		}
		switch a.Value.Type {
		case "STRING":
			var v string
			if err := json.Unmarshal(a.Value.Value, &v); err != nil {
				return spanOrErr{s, fmt.Errorf("attribute %s: %w", a.Key, err)}
			}
			setString(s, a.Key, v)
		case "BOOL":
			var v bool
			if err := json.Unmarshal(a.Value.Value, &v); err != nil {
				return spanOrErr{s, fmt.Errorf("attribute %s: %w", a.Key, err)}
			}
			setBool(s, a.Key, v)
		case "STRINGSLICE":
			if a.Key == attrAfter {
				if err := json.Unmarshal(a.Value.Value, &s.After); err != nil {
					return spanOrErr{s, fmt.Errorf("attribute %s: %w", a.Key, err)}
				}
			}
		}
	}
	return spanOrErr{span: s}
}

// The attribute names the otel module writes (agentidemotel.Attr*).
const (
	attrOp         = "agentidem.op"
	attrKind       = "agentidem.kind"
	attrIdentity   = "agentidem.identity.digest"
	attrEntity     = "agentidem.entity.digest"
	attrArgs       = "agentidem.args.digest"
	attrKeyID      = "agentidem.key_id"
	attrAfter      = "agentidem.after"
	attrSite       = "agentidem.site"
	attrStatus     = "agentidem.status"
	attrReplayed   = "agentidem.replayed"
	attrIdempotent = "agentidem.idempotent"
)

func setString(s *Span, key, v string) {
	switch key {
	case attrOp:
		s.Op = v
	case attrKind:
		s.Kind = v
	case attrIdentity:
		s.Identity = v
	case attrEntity:
		s.Entity = v
	case attrArgs:
		s.Args = v
	case attrKeyID:
		s.KeyID = v
	case attrSite:
		s.Site = v
	case attrStatus:
		s.Status = v
	}
}

func setBool(s *Span, key string, v bool) {
	switch key {
	case attrReplayed:
		s.Replayed = v
	case attrIdempotent:
		s.Idempotent = v
	}
}
