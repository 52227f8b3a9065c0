package audit

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func refund(trace, span, id, status string, start, end int) sp {
	return sp{trace: trace, span: span, op: "refund", kind: "write", id: id, entity: id, args: "a1", site: "agent.go:10", status: status, start: start, end: end}
}

func TestDuplicateWrite(t *testing.T) {
	r := both(t, refund("t1", "s1", "hmac-sha256:aa", "success", 0, 10), refund("t2", "s2", "hmac-sha256:aa", "success", 500, 510))
	require.Equal(t, "duplicate_write", codes(r))
	f := r.Findings[0]
	assert.Equal(t, 2, f.Count)
	require.Len(t, f.Spans, 2)
	assert.Equal(t, hexID("t1", 32), f.Spans[0].TraceID)
	assert.Equal(t, hexID("t2", 32), f.Spans[1].TraceID)
	assert.Equal(t, t0, f.Spans[0].Start)
	assert.Equal(t, t0.Add(500*time.Millisecond), f.Spans[1].Start)
	assert.Contains(t, f.Message, hexID("t1", 32))
	assert.Contains(t, f.Message, hexID("t2", 32))
	assert.Contains(t, f.Message, "2026-11-30T12:00:00.5Z", "both times are in the message")
	assert.False(t, r.Safe())

	three := both(t, refund("t1", "s1", "x", "success", 0, 1), refund("t1", "s2", "x", "success", 2, 3), refund("t1", "s3", "x", "success", 4, 5))
	require.Equal(t, "duplicate_write", codes(three))
	assert.Equal(t, 3, three.Findings[0].Count)
}

func TestNoDuplicateWhenTheEffectHappenedOnce(t *testing.T) {
	replayed := refund("t2", "s2", "x", "success", 500, 510)
	replayed.replayed = true
	idem := refund("t2", "s2", "x", "success", 500, 510)
	idem.idempotent = true
	otherKey := refund("t2", "s2", "x", "success", 500, 510)
	otherKey.key = "k2"
	otherOp := refund("t2", "s2", "x", "success", 500, 510)
	otherOp.op = "charge"
	for name, second := range map[string]sp{
		"replayed by the sink":      replayed,
		"declared idempotent":       idem,
		"another identity":          refund("t2", "s2", "y", "success", 500, 510),
		"the first attempt failed":  refund("t2", "s2", "x", "failed", 500, 510),
		"digests under another key": otherKey,
		"another op":                otherOp,
		"the same span read twice":  refund("t1", "s1", "x", "success", 0, 10),
	} {
		t.Run(name, func(t *testing.T) {
			r := both(t, refund("t1", "s1", "x", "success", 0, 10), second)
			assert.Empty(t, r.Findings)
			assert.True(t, r.Safe())
		})
	}
}

func attach(trace, span, parent string, start, end int) sp {
	return sp{trace: trace, span: span, parent: parent, op: "attachInvoice", kind: "write", id: "i", entity: "i", status: "success", after: []string{"createInvoice"}, start: start, end: end}
}

func create(trace, span, parent string, start, end int) sp {
	return sp{trace: trace, span: span, parent: parent, op: "createInvoice", kind: "write", id: "c", entity: "c", status: "success", start: start, end: end}
}

func TestDependentCallsConcurrent(t *testing.T) {
	r := both(t, create("t1", "s1", "agent", 0, 100), attach("t1", "s2", "agent", 50, 120))
	require.Equal(t, "dependent_calls_concurrent", codes(r))
	assert.Equal(t, []string{"createInvoice", "attachInvoice"}, r.Findings[0].Ops)
	// The dependent span first in the input: the same finding.
	r = both(t, attach("t1", "s2", "agent", 50, 120), create("t1", "s1", "agent", 0, 100))
	require.Equal(t, "dependent_calls_concurrent", codes(r))
	assert.Equal(t, []string{"createInvoice", "attachInvoice"}, r.Findings[0].Ops)

	for name, spans := range map[string][]sp{
		"in order":              {create("t1", "s1", "agent", 0, 100), attach("t1", "s2", "agent", 100, 120)},
		"in two traces":         {create("t1", "s1", "agent", 0, 100), attach("t2", "s2", "agent", 50, 120)},
		"from two parent spans": {create("t1", "s1", "run1", 0, 100), attach("t1", "s2", "run2", 50, 120)},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Empty(t, both(t, spans...).Findings)
		})
	}
}

func attempt(span, id, entity, args, status string, start, end int) sp {
	return sp{trace: "t1", span: span, parent: "agent", op: "refund", kind: "write", id: id, entity: entity, args: args, site: "agent.go:42", status: status, start: start, end: end}
}

func TestIdentityUnstable(t *testing.T) {
	r := both(t, attempt("s1", "key-1", "order-7", "a", "failed", 0, 100), attempt("s2", "key-2", "order-7", "a", "success", 150, 200))
	require.Equal(t, "identity_unstable", codes(r))
	assert.Equal(t, []string{"key-1", "key-2"}, r.Findings[0].Identities)

	other := attempt("s2", "key-2", "order-7", "a", "success", 150, 200)
	other.site = "agent.go:50"
	for name, spans := range map[string][]sp{
		"the retry kept its identity":       {attempt("s1", "k", "order-7", "a", "failed", 0, 100), attempt("s2", "k", "order-7", "a", "success", 150, 200)},
		"the first attempt succeeded":       {attempt("s1", "key-1", "order-7", "a", "success", 0, 100), attempt("s2", "key-2", "order-7", "a", "success", 150, 200)},
		"a loop over entities":              {attempt("s1", "o1", "order-1", "a", "failed", 0, 100), attempt("s2", "o2", "order-2", "a", "success", 150, 200)},
		"entity is the identity":            {attempt("s1", "o1", "o1", "a", "failed", 0, 100), attempt("s2", "o2", "o2", "a", "success", 150, 200)},
		"other arguments changed":           {attempt("s1", "key-1", "order-7", "a", "failed", 0, 100), attempt("s2", "key-2", "order-7", "b", "success", 150, 200)},
		"another call site":                 {attempt("s1", "key-1", "order-7", "a", "failed", 0, 100), other},
		"the calls overlap (not a retry)":   {attempt("s1", "key-1", "order-7", "a", "failed", 0, 100), attempt("s2", "key-2", "order-7", "a", "success", 50, 200)},
		"no argument digest (cannot judge)": {attempt("s1", "key-1", "order-7", "", "failed", 0, 100), attempt("s2", "key-2", "order-7", "", "success", 150, 200)},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Empty(t, both(t, spans...).Findings)
		})
	}
}

func TestReportRendersAndValidates(t *testing.T) {
	text := otlp(refund("t1", "s1", "hmac-sha256:aa", "success", 0, 10)) + "\n" +
		stdout(refund("t2", "s2", "hmac-sha256:aa", "success", 500, 510), true) + "\n" +
		otlp(create("t3", "s1", "agent", 0, 100), attach("t3", "s2", "agent", 50, 120)) + "\n" +
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"` + "\n" + // truncated
		`{"hello":"world"}` + "\n"
	r := audit(t, text)
	require.Equal(t, "duplicate_write,dependent_calls_concurrent", codes(r))
	rep := r.Report("audit of in.jsonl", "agentidem-gen audit in.jsonl", t0, time.Second)
	require.NoError(t, reportschema.Validate(rep))
	assert.False(t, rep.Safe)
	assert.Equal(t, 2, rep.UnsafeCount)
	require.Len(t, rep.Results, 3)
	assert.Contains(t, strings.Join(rep.Results[0].Trace.Errors, "\n"), "in.jsonl:91: truncated JSON object")
	dup := rep.Results[1]
	assert.Equal(t, 2, dup.Trace.Invocations, "one invocation per trace id")
	require.Len(t, dup.Duplicates, 1)
	assert.Equal(t, []string{"1:refund#1", "2:refund#2"}, dup.Duplicates[0].Calls)

	var buf bytes.Buffer
	require.NoError(t, render.HTML(&buf, rep))
	assert.Contains(t, buf.String(), "duplicate_write")
	buf.Reset()
	require.NoError(t, render.JUnit(&buf, rep))
	assert.Contains(t, buf.String(), "<failure")
	buf.Reset()
	require.NoError(t, r.WriteText(&buf))
	assert.Contains(t, buf.String(), "audit: UNSAFE")
	assert.Contains(t, buf.String(), "in.jsonl:91: truncated JSON object")
	assert.Contains(t, buf.String(), "1 JSON objects of another schema skipped")

	clean := audit(t, otlp(refund("t1", "s1", "x", "success", 0, 10)))
	rep = clean.Report("clean", "agentidem-gen audit in.jsonl", t0, time.Second)
	require.NoError(t, reportschema.Validate(rep))
	assert.True(t, rep.Safe)
}

func TestWindowEvictsOldTraces(t *testing.T) {
	a := New(Config{Window: time.Minute})
	var st Stats
	var lines []string
	for i := 0; i < 5000; i++ {
		lines = append(lines, otlp(sp{trace: "t" + string(rune('a'+i%26)) + time.Duration(i).String(), span: "s", op: "read", kind: "read", status: "success", start: i * 1000, end: i*1000 + 1}))
	}
	require.NoError(t, Read("in", strings.NewReader(strings.Join(lines, "\n")), &st, func(s *Span) error { a.Add(s); return nil }))
	assert.Equal(t, 5000, st.Ours)
	assert.Greater(t, a.evicted, 3000, "traces that ended more than a minute before the newest span are dropped")
	assert.Less(t, len(a.traces), 2000)
}

func TestIdempotentRepeatsAreNotDuplicates(t *testing.T) {
	set := func(span, args string) sp {
		s := refund("t1", span, "x", "success", 0, 10)
		s.op, s.idempotent, s.args = "setStatus", true, args
		return s
	}
	r := both(t, set("s1", "a"), set("s2", "a"), set("s3", "b"))
	assert.Empty(t, r.Findings)
	assert.Equal(t, 1, r.Absorbed, "the same arguments again: absorbed")
	assert.Equal(t, 1, r.Updates, "other arguments: an update of the first effect")
	assert.Contains(t, strings.Join(r.Notes(), "\n"), "1 absorbed (same arguments), 1 updates")

	// Without the declaration the same spans are duplicates.
	plain := func(span, args string) sp { s := set(span, args); s.idempotent = false; return s }
	r = both(t, plain("s1", "a"), plain("s2", "a"))
	assert.Equal(t, "duplicate_write", codes(r))
}
