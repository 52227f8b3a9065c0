// Command spangen writes a synthetic export of agent spans for the audit's
// benchmark (scripts/bench/audit.sh): -n spans in traces of five tool calls
// (a read, two writes with identities of their own, a dependent write after
// the first, a read), with one duplicated write every -dup traces, as the
// Collector's file exporter (OTLP JSON, -batch spans per line) or the SDK's
// stdouttrace exporter (one span per line).
//
//	go run ./internal/audit/internal/spangen -n 1000000 -format otlp -o spans.jsonl
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

type span struct {
	trace, id, parent string
	op, kind          string
	identity          string
	after             string
	start, end        time.Time
	failed            bool
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "hmac-sha256:" + hex.EncodeToString(sum[:])
}

func main() {
	n := flag.Int("n", 1000000, "number of spans")
	format := flag.String("format", "otlp", "otlp (Collector file exporter) or stdout (stdouttrace)")
	batch := flag.Int("batch", 100, "spans per OTLP line")
	dup := flag.Int("dup", 10000, "one duplicated write every this many traces (0: none)")
	out := flag.String("o", "", "output file (default standard output)")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "spangen:", err)
			os.Exit(1)
		}
		defer f.Close()
		w = bufio.NewWriterSize(f, 1<<20)
	}
	defer w.Flush()

	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	var pending []span
	flush := func() {
		if len(pending) == 0 {
			return
		}
		switch *format {
		case "otlp":
			writeOTLP(w, pending)
		default:
			for _, s := range pending {
				writeStdout(w, s)
			}
		}
		pending = pending[:0]
	}
	for i, tr := 0, 0; i < *n; tr++ {
		trace := fmt.Sprintf("%032x", tr+1)
		root := fmt.Sprintf("%016x", uint64(tr)<<8|0xff)
		at := t0.Add(time.Duration(tr) * 50 * time.Millisecond)
		order := "order-" + strconv.Itoa(tr)
		calls := []span{
			{op: "getOrder", kind: "read"},
			{op: "createInvoice", kind: "write", identity: digest("inv:" + order)},
			{op: "refund", kind: "write", identity: digest("refund:" + order)},
			{op: "attachInvoice", kind: "write", identity: digest("att:" + order), after: "createInvoice"},
			{op: "getOrder", kind: "read"},
		}
		if *dup > 0 && tr%*dup == *dup-1 {
			calls = append(calls, span{op: "refund", kind: "write", identity: digest("refund:" + order)})
		}
		for k, c := range calls {
			if i == *n {
				break
			}
			c.trace, c.parent = trace, root
			c.id = fmt.Sprintf("%016x", uint64(tr)<<8|uint64(k))
			c.start = at.Add(time.Duration(k) * 5 * time.Millisecond)
			c.end = c.start.Add(4 * time.Millisecond)
			pending = append(pending, c)
			i++
			if *format != "otlp" || len(pending) == *batch {
				flush()
			}
		}
	}
	flush()
}

type kv = map[string]any

func attrsOf(s span) [][2]any {
	a := [][2]any{{"agentidem.op", s.op}, {"agentidem.kind", s.kind}, {"agentidem.key_id", "00112233aabbccdd"}}
	if s.identity != "" {
		a = append(a, [2]any{"agentidem.identity.digest", s.identity}, [2]any{"agentidem.entity.digest", s.identity},
			[2]any{"agentidem.args.digest", digest("args")})
	}
	if s.after != "" {
		a = append(a, [2]any{"agentidem.after", []string{s.after}})
	}
	status := "success"
	if s.failed {
		status = "failed"
	}
	return append(a, [2]any{"agentidem.site", "example.com/agent/agent.go:42"}, [2]any{"agentidem.status", status}, [2]any{"agentidem.replayed", false})
}

func writeOTLP(w *bufio.Writer, spans []span) {
	var out []kv
	for _, s := range spans {
		var attrs []kv
		for _, a := range attrsOf(s) {
			var v kv
			switch x := a[1].(type) {
			case string:
				v = kv{"stringValue": x}
			case bool:
				v = kv{"boolValue": x}
			case []string:
				v = kv{"arrayValue": kv{"values": []kv{{"stringValue": x[0]}}}}
			}
			attrs = append(attrs, kv{"key": a[0], "value": v})
		}
		out = append(out, kv{"traceId": s.trace, "spanId": s.id, "parentSpanId": s.parent, "flags": 257, "name": s.op, "kind": 1,
			"startTimeUnixNano": strconv.FormatInt(s.start.UnixNano(), 10), "endTimeUnixNano": strconv.FormatInt(s.end.UnixNano(), 10),
			"attributes": attrs, "status": kv{}})
	}
	b, _ := json.Marshal(kv{"resourceSpans": []kv{{
		"resource":   kv{"attributes": []kv{{"key": "service.name", "value": kv{"stringValue": "agent"}}}},
		"scopeSpans": []kv{{"scope": kv{"name": "github.com/agentidem/agentidem-go/otel"}, "spans": out}}}}})
	w.Write(b)
	w.WriteByte('\n')
}

func writeStdout(w *bufio.Writer, s span) {
	var attrs []kv
	for _, a := range attrsOf(s) {
		typ := "STRING"
		switch a[1].(type) {
		case bool:
			typ = "BOOL"
		case []string:
			typ = "STRINGSLICE"
		}
		attrs = append(attrs, kv{"Key": a[0], "Value": kv{"Type": typ, "Value": a[1]}})
	}
	b, _ := json.Marshal(kv{"Name": s.op, "SpanContext": kv{"TraceID": s.trace, "SpanID": s.id, "TraceFlags": "01", "TraceState": "", "Remote": false},
		"Parent": kv{"TraceID": s.trace, "SpanID": s.parent, "TraceFlags": "01", "TraceState": "", "Remote": false}, "SpanKind": 1,
		"StartTime": s.start, "EndTime": s.end, "Attributes": attrs, "Events": nil, "Links": nil,
		"Status": kv{"Code": "Unset", "Description": ""}, "DroppedAttributes": 0, "DroppedEvents": 0, "DroppedLinks": 0, "ChildSpanCount": 0,
		"Resource":             []kv{{"Key": "service.name", "Value": kv{"Type": "STRING", "Value": "agent"}}},
		"InstrumentationScope": kv{"Name": "github.com/agentidem/agentidem-go/otel", "Version": "", "SchemaURL": "", "Attributes": nil}})
	w.Write(b)
	w.WriteByte('\n')
}
