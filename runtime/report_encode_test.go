package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// reflectReportJSON is Report.MarshalJSON as it was before reportWriter:
// the wire shapes of report_compat.go encoded by encoding/json. It is the
// oracle reportWriter is held to.
func reflectReportJSON(r Report) ([]byte, error) {
	type plain Report
	w := struct {
		SchemaVersion     string           `json:"schema_version"`
		Safe              bool             `json:"safe"`
		FaultCount        int              `json:"fault_count"`
		UnsafeCount       int              `json:"unsafe_count"`
		BaselineSucceeded bool             `json:"baseline_succeeded"`
		BaselineFailure   *baselineFailure `json:"baseline_failure"`
		Baseline          *traceJSON       `json:"baseline"`
		Results           []*resultJSON    `json:"results"`
		plain
		Findings []findingJSON `json:"findings"`
	}{
		SchemaVersion: r.SchemaVersion, Safe: r.Safe, FaultCount: r.FaultCount, UnsafeCount: r.UnsafeCount,
		BaselineSucceeded: r.BaselineSucceeded, Results: make([]*resultJSON, len(r.Results)),
		BaselineFailure: r.failureJSON(), Findings: findingsWire(r.Findings), plain: plain(r),
	}
	for i, res := range r.Results {
		w.Results[i] = res.wire()
	}
	if r.Baseline != nil {
		w.Baseline = r.Baseline.Trace.withID(r.Baseline.Scenario).wire()
	}
	return json.Marshal(w)
}

// reflectWriteJSON is WriteJSON written the slow way: the oracle's JSON
// through json.Indent, each operation of a trace then put back compact on
// its line (compactOperations).
func reflectWriteJSON(r *Report) ([]byte, error) {
	b, err := reflectReportJSON(*r)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return compactOperations(out.Bytes())
}

// compactOperations rewrites indented report JSON so that each element of
// a trace's "operations" array (an array under that key in an object that
// has a "target" key before it), and of every "findings", "problems" and
// "duplicates" array, is compact on the line it starts on.
func compactOperations(indented []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(indented))
	dec.UseNumber()
	var out []byte
	last := 0
	// Each element of an operations array starts after a newline and its
	// indentation; it is found by its offset in the input.
	var walk func(depth int, inTrace bool, key string) error
	walk = func(depth int, inTrace bool, key string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			sawTarget := false
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				name := k.(string)
				if name == "target" {
					sawTarget = true
				}
				if err := walk(depth+1, sawTarget, name); err != nil {
					return err
				}
			}
		case '[':
			for dec.More() {
				if inTrace && key == "operations" || key == "findings" || key == "problems" || key == "duplicates" {
					// The element starts at the next non-space byte.
					start := int(dec.InputOffset())
					for indented[start] == ',' || indented[start] == ' ' || indented[start] == '\n' {
						start++
					}
					var raw json.RawMessage
					if err := dec.Decode(&raw); err != nil {
						return err
					}
					end := int(dec.InputOffset())
					var c bytes.Buffer
					if err := json.Compact(&c, indented[start:end]); err != nil {
						return err
					}
					out = append(out, indented[last:start]...)
					out = append(out, c.Bytes()...)
					last = end
					continue
				}
				if err := walk(depth+1, false, ""); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	if err := walk(0, false, ""); err != nil {
		return nil, err
	}
	return append(out, indented[last:]...), nil
}

// checkEncoding fails unless MarshalJSON and WriteJSON write what the
// reflection path writes, or return the error it returns.
func checkEncoding(tb testing.TB, name string, r *Report) {
	tb.Helper()
	want, wantErr := reflectReportJSON(*r)
	got, gotErr := r.MarshalJSON()
	sameBytes(tb, name+": MarshalJSON", got, gotErr, want, wantErr)
	want, wantErr = reflectWriteJSON(r)
	var buf bytes.Buffer
	gotErr = r.WriteJSON(&buf)
	sameBytes(tb, name+": WriteJSON", buf.Bytes(), gotErr, want, wantErr)
}

func sameBytes(tb testing.TB, what string, got []byte, gotErr error, want []byte, wantErr error) {
	tb.Helper()
	if (gotErr != nil) != (wantErr != nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		tb.Fatalf("%s: error %v, the reflection path's %v", what, gotErr, wantErr)
	}
	if wantErr != nil || bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-200)
	tb.Fatalf("%s: %d bytes, the reflection path %d; they differ at byte %d:\nwritten:    %q\nreflection: %q",
		what, len(got), len(want), i, got[from:min(len(got), i+80)], want[from:min(len(want), i+80)])
}

// TestReportEncoderMatchesReflection runs agents that produce every part
// of a report (findings of each kind, panics, redaction, faults, schedules,
// shards, state changes, absorbed repeats, invariants, odd strings) and
// checks that reportWriter writes what encoding/json writes for the wire
// shapes.
func TestReportEncoderMatchesReflection(t *testing.T) {
	reports := map[string]*Report{"ten writes": tenWriteReport(t)}

	reports["todo"] = runTodo(t, &todoAgent{add: addOp(false), set: setOp(false)})
	reports["todo idempotent"] = runTodo(t, &todoAgent{add: addOp(false), set: setOp(true)})
	state := &todoAgent{add: addOp(false), set: setOp(false), done: []bool{true, false}}
	reports["todo state"] = runTodo(t, state, State(func() any { return state.list.snapshot() }), Invariant("one item", func(*Trace) error {
		if n := len(state.list.items); n > 1 {
			return fmt.Errorf("%d items <&>\u2028", n)
		}
		return nil
	}))

	reports["fan"] = fanRun(t, 3)
	reports["fan shard"] = fanRun(t, 3, ShardOf(2, 3))
	merged, err := MergeShards(fanRun(t, 2, ShardOf(1, 2)), fanRun(t, 2, ShardOf(2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	reports["fan merged"] = merged

	var s *store
	reports["odd strings"] = mustRun(t, "odd \xff <b>&\u2029", func(ctx context.Context) error {
		for _, k := range []string{"", "é日本😀", "<script>&amp;", "\xff\xfe", "quote\"back\\slash", "\x00\x1f\t\n\r\b\f\x7f", "\u2028\u2029"} {
			if err := s.putTraced(ctx, k, len(k)); err != nil {
				return fmt.Errorf("put %q: %w", k, err)
			}
			if _, err := s.getTraced(ctx, k+"\xc3"); err != nil && k == "" {
				return errors.New("get <failed> & \xe2\x80")
			}
		}
		return nil
	}, Setup(func(context.Context) error { s = newStore(); return nil }))

	reports["panics"] = mustRun(t, "panics", func(ctx context.Context) error {
		notifyTraced("hello")
		notifyTraced("boom")
		return explodeTraced(ctx, 3)
	})
	reports["agent panic"] = mustRun(t, "agent panic", func(ctx context.Context) error {
		if err := s.putTraced(ctx, "k", 1); err != nil {
			return err
		}
		panic(fmt.Sprintf("agent <panicked> \xff %v", map[string]int{"a": 1}))
	}, Setup(func(context.Context) error { s = newStore(); return nil }))
	reports["redaction"] = mustRun(t, "login", func(ctx context.Context) error {
		if err := loginTraced(ctx, "ann", "hunter2"); err != nil {
			return err
		}
		return loginTraced(ctx, "ann", "hunter2")
	})
	reports["setup fails"], _ = Run(context.Background(), "setup", func(context.Context) error { return nil },
		Setup(func(context.Context) error { return errors.New("no database") }))
	reports["baseline fails"] = mustRun(t, "failing", func(ctx context.Context) error {
		if err := s.putTraced(ctx, "k", 1); err != nil {
			return err
		}
		return errors.New("always <fails>")
	}, Setup(func(context.Context) error { s = newStore(); return nil }))
	reports["nothing traced"] = mustRun(t, "nothing", func(context.Context) error { return nil })
	reports["lost response"], _ = runHTTPRefunds(t, styleLoop, false, true) // http_requests (transport.go)

	for name, rep := range reports {
		if rep == nil {
			t.Fatalf("%s: no report", name)
		}
		checkEncoding(t, name, rep)
		grouped := *rep
		grouped.Problems = GroupFindings(rep.Findings)
		checkEncoding(t, name+" (problems)", &grouped)
		// What ReadReport gives back: every value decoded as generic JSON.
		var back Report
		b, err := rep.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkEncoding(t, name+" (read back)", &back)
	}
}

func mustRun(t *testing.T, name string, fn func(context.Context) error, opts ...Option) *Report {
	t.Helper()
	rep, err := Run(context.Background(), name, fn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestReportEncoderMatchesReflectionOnFilledReports fills every exported
// field of a report, recursively, with values chosen at random (zero
// values, empty and nil slices and maps, odd strings, times in several
// zones), so that a field added to a report type and not to reportWriter
// fails here.
func TestReportEncoderMatchesReflectionOnFilledReports(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	for seed := range n {
		rnd := rand.New(rand.NewPCG(uint64(seed), 15))
		var r Report
		fill(reflect.ValueOf(&r).Elem(), rnd, 0)
		checkEncoding(t, fmt.Sprintf("seed %d", seed), &r)
	}
}

var (
	oddStrings = []string{"", "", "plain", "<a href=\"x\">&amp;</a>", "\u2028\u2029", "é日本😀", "\xff\xfe\xc3",
		"quote\"back\\slash/", "\x00\x01\x1f\t\n\r\b\f\x7f", "panic: boom", "setup: no db", "lost_acknowledgement/refund#1"}
	oddValues = []any{nil, "s<>&\u2028", "\xff", 0, -7, int64(math.MaxInt64), 1.5, -0.0, 1e-7, 1e21, 123456789.125, 3e-300,
		float32(0.1), true, false, uint8(200), []byte("bytes"), []any{}, []any{1.0, "x", nil, []any{map[string]any{}}},
		map[string]any{}, map[string]any{"b": 1, "a": []any{"<", map[string]any{"z": nil}}},
		struct {
			X string
			Y []int `json:"y,omitempty"`
		}{X: "<x>"}, Redacted, json.Number("12.50"), json.RawMessage(`{"raw": [1, 2 ]}`), KindWrite,
		positional(Args{Names: []string{"a"}, Values: []any{"<"}}), &Fault{Kind: FaultCrash, Op: "w"}}
	zones = []*time.Location{time.UTC, time.Local, time.FixedZone("", 5*3600+30*60), time.FixedZone("X", -8*3600)}
)

// fill sets v to a random value of its type.
func fill(v reflect.Value, rnd *rand.Rand, depth int) {
	if rnd.IntN(4) == 0 || depth > 20 {
		return // the zero value
	}
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		t := time.Date(1+rnd.IntN(9998), time.Month(1+rnd.IntN(12)), 1+rnd.IntN(28), rnd.IntN(24), rnd.IntN(60), rnd.IntN(60), 0, zones[rnd.IntN(len(zones))])
		switch rnd.IntN(4) {
		case 1:
			t = t.Add(time.Duration(rnd.IntN(1e9)))
		case 2:
			t = t.Add(time.Duration(rnd.IntN(1000)) * time.Millisecond)
		case 3:
			t = time.Now()
		}
		v.Set(reflect.ValueOf(t))
		return
	case reflect.TypeFor[Kind]():
		v.SetUint(uint64(rnd.IntN(4)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(oddStrings[rnd.IntN(len(oddStrings))])
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt([]int64{-1, 1, 2, 42, math.MaxInt32, math.MinInt64}[rnd.IntN(6)])
	case reflect.Uint8:
		v.SetUint(uint64(rnd.IntN(256)))
	case reflect.Interface:
		v.Set(reflect.ValueOf(&oddValues[rnd.IntN(len(oddValues))]).Elem())
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), rnd, depth+1)
		v.Set(p)
	case reflect.Slice:
		n := rnd.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(s.Index(i), rnd, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range rnd.IntN(4) {
			k := reflect.New(v.Type().Key()).Elem()
			k.SetString(oddStrings[rnd.IntN(len(oddStrings))])
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, rnd, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), rnd, depth+1)
			}
		}
	default:
		panic(fmt.Sprintf("fill: no rule for %s", v.Type()))
	}
}

type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("cannot <marshal>") }

// TestReportEncoderErrors: a report the reflection path cannot encode
// gets the same error from reportWriter (NaN and unencodable values that
// did not go through Run's encodable, times outside RFC 3339's range).
func TestReportEncoderErrors(t *testing.T) {
	base := func() *Report {
		r := tenWriteReport(t)
		c := *r
		b := *r.Baseline
		c.Baseline = &b
		tr := *b.Trace
		tr.Ops = append([]Operation(nil), tr.Ops...)
		b.Trace = &tr
		c.Results = append([]*Result(nil), r.Results...)
		return &c
	}
	farFuture := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]func(r *Report){
		"NaN result":       func(r *Report) { r.Baseline.Trace.Ops[3].Result = math.NaN() },
		"Inf result":       func(r *Report) { r.Baseline.Trace.Ops[0].Result = []any{math.Inf(-1)} },
		"channel result":   func(r *Report) { r.Baseline.Trace.Ops[0].Result = make(chan int) },
		"failing result":   func(r *Report) { r.Baseline.Trace.Ops[1].Result = failingMarshaler{} },
		"year 10000 start": func(r *Report) { r.Baseline.Trace.Ops[2].StartedAt = farFuture },
		"year 10000 end":   func(r *Report) { r.Baseline.Trace.Ops[2].CompletedAt = farFuture },
		"zone +25h":        func(r *Report) { r.Baseline.Trace.Ops[2].CompletedAt = time.Now().In(time.FixedZone("", 25*3600)) },
		"report start":     func(r *Report) { r.StartedAt = farFuture },
		"trace start":      func(r *Report) { r.Baseline.Trace.StartedAt = farFuture },
		"NaN details": func(r *Report) {
			r.Findings = []Finding{{Code: "x", Details: map[string]any{"n": math.NaN()}}}
		},
		"NaN details in baseline result": func(r *Report) {
			r.Baseline.Findings = []Finding{{Code: "x", Details: map[string]any{"n": math.NaN()}}}
		},
		"year 10000 in baseline result only": func(r *Report) {
			r.Baseline.Findings = []Finding{{Code: "x", Details: map[string]any{"t": farFuture}}}
		},
		"NaN details in problems": func(r *Report) {
			r.Problems = []Finding{{Code: "x"}, {Code: "y", Details: map[string]any{"n": math.Inf(1)}}}
		},
		"two errors": func(r *Report) {
			r.Problems = []Finding{{Code: "y", Details: map[string]any{"n": math.Inf(1)}}}
			r.Baseline.Trace.Ops[2].CompletedAt = farFuture
		},
	}
	for name, spoil := range cases {
		r := base()
		spoil(r)
		if _, err := reflectReportJSON(*r); err == nil {
			t.Fatalf("%s: the reflection path encodes it", name)
		}
		checkEncoding(t, name, r)
	}
}

// FuzzReportEncoder decodes arbitrary JSON as a report and checks that
// reportWriter writes what the reflection path writes for it:
//
//	go test ./runtime -run '^$' -fuzz FuzzReportEncoder$ -fuzzminimizetime 0s
func FuzzReportEncoder(f *testing.F) {
	for _, name := range []string{"report-v1.json", "compat/agentidem-python-report-naive.json", "compat/agentidem-python-report-keyed.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	a := &todoAgent{add: addOp(false), set: setOp(true)}
	todo, err := Run(context.Background(), "todo", a.run, Setup(func(context.Context) error { a.list = &todoList{}; return nil }))
	if err != nil {
		f.Fatal(err)
	}
	todo.Problems = GroupFindings(todo.Findings)
	b, err := todo.MarshalJSON()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"schema_version":"2","baseline_result":{"trace":{"operations":[{"kind":"write","args":{"a":[1e-7,{"x":[]}]},"result":{"b":[1,{}],"a":"\u2028<"},"completed_at":"2024-01-02T03:04:05.1+05:30"}]}},"shard":{"merged":[1,2]},"problems":[{"details":{"k":[{}]},"seen_in":[{}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Report
		if err := json.Unmarshal(b, &r); err != nil {
			return
		}
		checkEncoding(t, "decoded", &r)
	})
}

// FuzzReportEncoderValues puts a fuzzed string, number and time in every
// kind of place a report has: names, arguments, results, errors, details.
//
//	go test ./runtime -run '^$' -fuzz FuzzReportEncoderValues
func FuzzReportEncoderValues(f *testing.F) {
	f.Add("plain", 1.5, int64(1700000000123456789), uint8(2))
	f.Add("<&>\u2028\xff\"\\\x00", 1e-7, int64(-62135596800000000), uint8(3))
	f.Add("", 1e21, int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, s string, x float64, n int64, k uint8) {
		at := time.Unix(0, n).In(zones[int(k)%len(zones)])
		op := Operation{
			ID: s, Name: s, Kind: Kind(k % 4), Args: Args{Names: []string{s}, Values: []any{s, x, n, []any{s, x}, map[string]any{s: x}}},
			Identity: s, Entity: s, Result: map[string]any{s: []any{x, s}}, Error: s, Status: Status(s),
			StartedAt: at, CompletedAt: at.Add(time.Duration(k)), After: []string{s}, Panic: &Panic{Value: s},
		}
		read := op
		read.Kind, read.Result = KindRead, x
		tr := &Trace{ID: s, Name: s, Ops: []Operation{op, read}, Errors: []string{s}, Fault: &Fault{Op: s}}
		find := Finding{Code: s, Message: s, Details: map[string]any{s: x, "t": at}, SeenIn: []Occurrence{{Scenario: s}}}
		res := &Result{Scenario: s, Kind: s, OperationIndex: int(n % 3), Error: s, Trace: tr, Findings: []Finding{find},
			Invariants: []InvariantResult{{Name: s, Error: s}}, Duplicates: []Duplicate{{Op: s, Args: op.Args, Calls: []string{s}}}}
		r := &Report{Name: s, BaselineFailure: s, Baseline: res, Results: []*Result{res, nil}, Findings: []Finding{find},
			Problems: []Finding{find}, StartedAt: at, Shard: &Shard{Source: s}}
		checkEncoding(t, "values", r)
	})
}

// TestWriteJSONKeptBuffer: WriteJSON keeps its buffer between calls; a
// smaller report after a larger one, and the larger one again, are written
// as the reflection path writes them, with nothing left of the other.
func TestWriteJSONKeptBuffer(t *testing.T) {
	large := tenWriteReport(t)
	small := &Report{Name: "small", Safe: true}
	for i, r := range []*Report{large, small, large, small} {
		checkEncoding(t, fmt.Sprintf("write %d", i), r)
	}
	if b := reportBuffer.Load(); b == nil || cap(*b) == 0 {
		t.Fatal("WriteJSON kept no buffer")
	}
}

// TestBaselineFailureType: baseline_failure is null for a baseline that
// passed, and says whether the failure was a panic, a failing Setup or an
// error.
func TestBaselineFailureType(t *testing.T) {
	for _, c := range []struct {
		r    Report
		want string // "" for null
	}{
		{Report{BaselineSucceeded: true, Baseline: &Result{}}, ""},
		{Report{BaselineFailure: "panic: boom"}, "panic"},
		{Report{BaselineFailure: "setup: no database"}, "setup"},
		{Report{BaselineFailure: "refund failed"}, "error"},
		{Report{Baseline: &Result{}}, "error"},
	} {
		bf := c.r.failureJSON()
		switch {
		case c.want == "" && bf != nil:
			t.Errorf("%q: baseline_failure %+v, want null", c.r.BaselineFailure, bf)
		case c.want != "" && (bf == nil || bf.ErrorType != c.want || bf.Message != c.r.BaselineFailure):
			t.Errorf("%q: baseline_failure %+v, want error_type %q", c.r.BaselineFailure, bf, c.want)
		}
	}
	// As a suite reports them: an agent's panic ("delivery 1: agent
	// panicked: ...") and the error an agent returned for a tool's panic
	// were error_type "error" (a red team's reader of the Python SDK's
	// reports, where docs/reports.md says "panic").
	boom := &Op{Name: "boom", Kind: KindWrite, Params: []string{"id"}}
	for _, c := range []struct {
		name  string
		agent func(context.Context) error
		want  string
	}{
		{"agent panics", func(context.Context) error { panic("kaboom") }, "panic"},
		{"tool panics", func(ctx context.Context) error {
			return traced(ctx, boom, []any{"x"}, []any{"x"}, func(context.Context) error { panic("kaboom") })
		}, "panic"},
		{"agent fails", func(context.Context) error { return errors.New("no") }, "error"},
	} {
		rep, err := Run(context.Background(), t.Name()+"/"+c.name, c.agent)
		if err != nil {
			t.Fatal(err)
		}
		if bf := rep.failureJSON(); bf == nil || bf.ErrorType != c.want {
			t.Errorf("%s: baseline_failure %+v, want error_type %q", c.name, bf, c.want)
		}
	}
}

// TestTimesWrittenAsMarshalJSON checks the times reportWriter writes from
// the text of the second before (clock) against time.Time.MarshalJSON:
// fractions with and without trailing zeros, none, zones east and west,
// a zone at offset zero that is not UTC, seconds and zones that change.
func TestTimesWrittenAsMarshalJSON(t *testing.T) {
	india := time.FixedZone("IST", 5*3600+1800)
	west := time.FixedZone("W", -7*3600)
	zero := time.FixedZone("GMT0", 0)
	nyc, err := time.LoadLocation("America/New_York")
	if err != nil {
		nyc = west
	}
	base := time.Date(2026, 12, 1, 23, 59, 59, 0, time.UTC)
	var times []time.Time
	// An offset with seconds (RFC 3339 writes minutes), and offsets
	// MarshalJSON refuses (24 hours and more).
	odd := []*time.Location{time.FixedZone("S", 3600+30), time.FixedZone("D", 24*3600), time.FixedZone("M", -24*3600-60)}
	for _, loc := range append([]*time.Location{time.UTC, time.Local, india, west, zero, nyc}, odd...) {
		for _, ns := range []int{0, 1, 10, 120, 999999999, 500000000, 123456789, 100} {
			times = append(times, base.In(loc).Add(time.Duration(ns)))
		}
		times = append(times, base.Add(time.Second).In(loc), base.Add(time.Second+7).In(loc))
	}
	// The spring-forward second in New York, on either side.
	gap := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
	times = append(times, gap.Add(-time.Nanosecond).In(nyc), gap.In(nyc), gap.Add(time.Nanosecond).In(nyc), time.Date(9999, 12, 31, 23, 59, 59, 5, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 5, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 6, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 7, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 59, 8, time.UTC), time.Date(-1, 12, 31, 23, 59, 59, 9, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC))
	w := reportWriter{}
	for i, tm := range times {
		w.b, w.first, w.err = w.b[:0], true, nil
		w.time("t", tm, timeType)
		want, err := tm.MarshalJSON()
		if err != nil {
			if w.err == nil {
				t.Errorf("time %d (%v): no error, MarshalJSON's is %v", i, tm, err)
			}
			continue
		}
		if got := string(w.b[len(`"t":`):]); got != string(want) {
			t.Errorf("time %d (%v): wrote %s, MarshalJSON %s", i, tm, got, want)
		}
	}
}

// TestAppendFractionAsRFC3339 compares the fraction of a second the
// encoder writes, eight digits at a time in one word, with time's RFC 3339
// text: the edges of each digit, of each pair and of each half of the
// word, trailing zeros in every number, a sweep and random values. (The
// encoder's was also checked against the two-digit loop it replaced on
// every value from 0 to 999,999,999.)
func TestAppendFractionAsRFC3339(t *testing.T) {
	ns := []int{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 9999, 10000, 10001, 99999999, 100000000, 100000001,
		120000000, 500000000, 123456789, 987654321, 999999999, 999990000, 900000009, 10000001}
	for v := 7; v < 1e9; v = v*3 + 1 {
		ns = append(ns, v, v-v%100, v-v%10000)
	}
	// Each digit alone, as 1 and as 9, and every number of trailing zeros.
	for p := 1; p < 1e9; p *= 10 {
		ns = append(ns, p, 9*p, 999999999-999999999%p, 999999999/p*p+p/2)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		v := rnd.IntN(1e9)
		ns = append(ns, v, v-v%(1+rnd.IntN(1e6)))
	}
	for _, n := range ns {
		text := time.Date(2026, 12, 3, 4, 5, 6, n, time.UTC).Format(time.RFC3339Nano)
		want := strings.TrimSuffix(text[len("2026-12-03T04:05:06"):], "Z")
		if got := string(appendFraction(nil, n)); got != want {
			t.Errorf("appendFraction(%d) = %q, want %q (from %s)", n, got, want, text)
		}
	}
}

// flipMarshaler's text is "odd" and "even" by turns.
type flipMarshaler struct{ n int }

func (f *flipMarshaler) MarshalJSON() ([]byte, error) {
	f.n++
	if f.n%2 == 1 {
		return []byte(`"odd"`), nil
	}
	return []byte(`"even"`), nil
}

// TestReportEncoderReusesOnlyEqualText gives reportWriter's shortcuts in
// an operation (the identity copied from the entity, the status and
// observation as one literal, a named argument copied from args) and its
// texts (strings copied from where they were written before, looked up by
// address or by three bytes) the cases where a shortcut taken wrongly
// shows: strings alike in the bytes looked at, equal strings at other
// addresses, every status beside every observation, more arguments than
// are copied, arguments whose text comes from encoding/json, and checks
// the bytes against the reflection path's.
func TestReportEncoderReusesOnlyEqualText(t *testing.T) {
	r := tenWriteReport(t)
	b := *r.Baseline
	r.Baseline = &b
	tr := *b.Trace
	b.Trace = &tr
	long := `put executed 2 times for identity "a": one <effect> & more`
	alike := []string{`"<ab>"`, `"<xb>"`, `"<ab>"`[:5] + `"`, "<ab>", "<xb>", `"a"`, `"b"`, "é\"", "ü\"",
		long, strings.Clone(long), long[:len(long)-1] + "!", strings.Repeat("x", textMin), strings.Repeat("y", textMin)}
	statuses := []Status{StatusSuccess, StatusFailed, StatusRunning, ""}
	observations := []Observation{ObservationReceived, ObservationFailed, ObservationLost, ""}
	var ops []Operation
	for i := range 3 * len(alike) {
		o := tr.Ops[i%len(tr.Ops)]
		o.Kind = []Kind{KindWrite, KindRead, KindWrite}[i%3]
		o.Entity = alike[i%len(alike)]
		o.Identity = alike[(i+i/len(alike))%len(alike)]
		o.Error = alike[(i+3)%len(alike)]
		o.Status = statuses[i%len(statuses)]
		o.Observation = observations[(i/len(statuses))%len(observations)]
		switch i % 4 {
		case 0:
			o.Entity = ""
		case 1:
			o.Args = Args{Names: []string{"k"}, Values: []any{o.Entity}}
		case 2:
			o.Args = Args{Names: []string{"a", "b", "c"}, Values: []any{
				1.5, map[string]any{"z": "<", "a": nil}, json.Number("12.50"), struct{ X string }{"<x>"}, -0.0,
				alike[i%len(alike)], uint8(7), int32(-3), uint64(math.MaxUint64), nil, true, "tenth"}}
		case 3:
			// Written once in args and once in named_args: odd, then
			// even, unless the second is a copy of the first.
			o.Args = Args{Names: []string{"flip"}, Values: []any{new(flipMarshaler)}}
		}
		ops = append(ops, o)
	}
	tr.Ops = ops
	r.Findings = append(r.Findings, Finding{Code: "x", Message: strings.Clone(long), Replay: alike[1]},
		Finding{Code: "y", Message: long[:len(long)-1] + "?", Replay: alike[0], Identities: alike})
	checkEncoding(t, "shortcuts", r)
}

// TestSameFindingComparesEveryField: WriteJSON copies a finding of the
// report's list from where its result wrote it when sameFinding says it is
// that one. Each field of Finding changed alone (a new value, or the same
// value in other memory for a string, a list or a map) must make them
// differ; a field added to Finding and not compared fails here.
func TestSameFindingComparesEveryField(t *testing.T) {
	base := Finding{Code: "c", Severity: SeverityError, Message: "m", Scenario: "s", Ops: []string{"o"},
		Identities: []string{"i"}, Calls: []string{"1:o#1"}, Replay: "r", Stack: "st",
		Details: map[string]any{"k": 1}, Follows: []string{"f"}, SeenIn: []Occurrence{{Scenario: "s"}}}
	copied := base
	if !sameFinding(&copied, &base) {
		t.Fatal("a copy of a finding is not the same finding")
	}
	// Equal text in other memory is not known to be the same: it is
	// written, not copied.
	copied.Message = strings.Clone(base.Message)
	if sameFinding(&copied, &base) {
		t.Error("a finding whose message is a clone passes for the same finding")
	}
	typ := reflect.TypeFor[Finding]()
	for i := range typ.NumField() {
		other := base
		v := reflect.ValueOf(&other).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Slice:
			v.Set(reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()), v))
		case reflect.Map:
			v.Set(reflect.ValueOf(maps.Clone(base.Details)))
		default:
			t.Fatalf("field %s of kind %s: compare it in sameFinding and change it here", typ.Field(i).Name, v.Kind())
		}
		if sameFinding(&other, &base) {
			t.Errorf("field %s changed, and sameFinding still says it is the same finding", typ.Field(i).Name)
		}
	}
}

// TestAppendEscapedMatchesAppendJSONString holds appendEscaped, which
// escapes a quote inline and appends the plain runs between escapes in
// one piece (plainLen), to appendJSONString: every byte value at each of
// 17 positions, with and without a quote after it, and random strings
// dense in bytes to escape.
func TestAppendEscapedMatchesAppendJSONString(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want := 0
		for want < len(s) && jsonPlain[s[want]] {
			want++
		}
		if got := plainLen(s); got != want {
			t.Fatalf("plainLen(%q) = %d, want %d", s, got, want)
		}
		if got, want := appendEscaped(nil, s), appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("appendEscaped(%q) = %s, want %s", s, got, want)
		}
	}
	for c := range 256 {
		for at := range 17 {
			b := []byte(strings.Repeat("a", 20))
			b[at] = byte(c)
			check(string(b))
			b[at+1] = '"' // a byte to escape above the first
			check(string(b))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	odd := []byte("\"&<>\\\x00\x1f\x7f\x80\xe2\x80\xa8\xc3\xa9\xff=?;'")
	for range 50000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			if r.IntN(6) == 0 {
				b[i] = odd[r.IntN(len(odd))]
			} else {
				b[i] = byte(0x20 + r.IntN(0x60))
			}
		}
		check(string(b))
	}
}

// TestDupDetailsAsTheirMap holds dupDetails, which writes a duplicate_write
// finding's details from the values duplicateDetails packed, to the map's
// encoding, and dupDetailsOf to the maps it made and nothing else: a map
// with a member changed, added or taken away is written as a map.
func TestDupDetailsAsTheirMap(t *testing.T) {
	rep := tenWriteReport(t)
	n := 0
	for _, f := range rep.Findings {
		if f.Code != CodeDuplicateWrite {
			continue
		}
		x, count := dupDetailsOf(f.Details)
		if x == nil {
			t.Fatalf("%s: its details are not known for duplicateDetails': %v", f.Scenario, f.Details)
		}
		n++
		fast := reportWriter{}
		fast.dupDetails(x, count)
		slow := reportWriter{}
		slow.value(f.Details)
		if string(fast.b) != string(slow.b) {
			t.Fatalf("details written as\n%s\nwant\n%s", fast.b, slow.b)
		}
		changed := []func(m map[string]any){
			func(m map[string]any) { m["identity"] = strings.Clone(m["identity"].(string)) },
			func(m map[string]any) { m["operation_name"] = "other" },
			func(m map[string]any) { m["args"] = positional{Values: []any{1}} },
			func(m map[string]any) { m["operation_ids"] = []string{"x"} },
			func(m map[string]any) { m["count"] = int64(3) },
			func(m map[string]any) { m["more"] = 1 },
			func(m map[string]any) { delete(m, "count"); m["counted"] = 2 },
		}
		for i, change := range changed {
			m := maps.Clone(f.Details)
			change(m)
			if x, _ := dupDetailsOf(m); x != nil {
				t.Errorf("change %d: a changed map passes for duplicateDetails': %v", i, m)
			}
		}
	}
	if n == 0 {
		t.Fatal("no duplicate_write finding")
	}
}

// TestRepeatedOperationChangedInEachField: an operation whose id was
// written before has its head and tail copied from there when sameHead
// and sameTail say every field they are written from is equal (opMemo).
// Each exported field of Operation is changed alone in a later operation
// of the same id (the same string, as a suite's traces share them), and
// the report must be the reflection path's bytes: a field added to
// Operation and written in the head or the tail, and not compared there,
// fails here.
func TestRepeatedOperationChangedInEachField(t *testing.T) {
	base := Operation{ID: "1:post#1", Name: "post", Kind: KindWrite, Entity: `"k"`, Identity: `"k"`,
		Args: Args{Names: []string{"key", "v"}, Values: []any{"k", 3}}, Result: 0, Status: StatusSuccess,
		Observation: ObservationReceived, Invocation: 1, Occurrence: 1, Site: "a.go:1",
		StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), CompletedAt: time.Date(2026, 1, 2, 3, 4, 5, 7, time.UTC)}
	typ := reflect.TypeFor[Operation]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		other := base
		v := reflect.ValueOf(&other).Elem().Field(i)
		switch f.Name {
		case "Args":
			other.Args = Args{Names: []string{"key", "w"}, Values: []any{"k", 3}}
		case "Result":
			other.Result = 1
		case "Panic":
			other.Panic = &Panic{Value: "p"}
		case "Kind":
			other.Kind = KindRead
		default:
			switch v.Kind() {
			case reflect.String:
				v.SetString(v.String() + "x")
			case reflect.Int:
				v.SetInt(v.Int() + 1)
			case reflect.Bool:
				v.SetBool(!v.Bool())
			case reflect.Slice:
				v.Set(reflect.ValueOf([]string{"z"}))
			case reflect.Struct:
				v.Set(reflect.ValueOf(base.StartedAt.Add(time.Second)))
			default:
				t.Fatalf("field %s of kind %s: change it here", f.Name, v.Kind())
			}
		}
		// The same operation again, then the changed one, then one whose
		// arguments and result cannot be compared (a map), then the
		// first again: each written after one of its id.
		odd := base
		odd.Args = Args{Names: []string{"key", "v"}, Values: []any{"k", map[string]any{"a": 1}}}
		odd.Result = map[string]any{"b": 2}
		r := &Report{SchemaVersion: "2", Name: "ops"}
		for _, o := range []Operation{base, base, other, odd, base, other} {
			r.Results = append(r.Results, &Result{Scenario: "s", OperationIndex: -1, Trace: &Trace{ID: "t", Ops: []Operation{o}}})
		}
		checkEncoding(t, f.Name, r)
	}
}

// TestProblemsCopiedOnlyFromTheSameFinding: a problem is copied from the
// finding its result wrote, up to its seen_in, only when every field
// before seen_in is the same memory and that finding has no seen_in of
// its own (reportWriter.problem).
func TestProblemsCopiedOnlyFromTheSameFinding(t *testing.T) {
	f := Finding{Code: "duplicate_write", Severity: SeverityError, Message: `post "k" <twice>`, Scenario: "s",
		Ops: []string{"post"}, Calls: []string{"1:post#1", "2:post#1"}, Replay: "go test -run x",
		Details: map[string]any{"count": 2}}
	seen := f
	seen.SeenIn = []Occurrence{{Scenario: "t", Replay: "r"}}
	r := &Report{SchemaVersion: "2", Name: "problems"}
	r.Results = []*Result{
		{Scenario: "s", OperationIndex: -1, Findings: []Finding{f}},
		{Scenario: "t", OperationIndex: -1, Findings: []Finding{seen}},
	}
	r.Findings = []Finding{f, seen}
	clone := f
	clone.Message = strings.Clone(f.Message)
	noSeen := f
	noSeen.SeenIn = nil
	withSeen := seen
	withSeen.SeenIn = []Occurrence{{Scenario: "s", Replay: "go test -run x"}, {Scenario: "u", Replay: "v"}}
	r.Problems = []Finding{withSeen, seen, clone, noSeen, f, withSeen}
	checkEncoding(t, "problems", r)
	r.Results[0].Findings = nil
	checkEncoding(t, "problems without their findings", r)
}

// TestLikeTextEscapesAsAppendEscaped holds likeText, which takes the
// parts of a long string equal to the plain ends of the last one as they
// are, to appendEscaped: strings one after the other that share a prefix,
// a suffix, both or neither with the one before, the shared part plain
// or not, with bytes to escape, runes of several bytes, invalid UTF-8 and
// U+2028 around each end of what is shared, and strings shorter than the
// shared ends of the one before.
func TestLikeTextEscapesAsAppendEscaped(t *testing.T) {
	rnd := rand.New(rand.NewPCG(15, 15))
	pieces := []string{"a", "plain text ", `"`, `\`, "<", ">", "&", "\n", "\x01", "é", "\u2028", "\xff", "\xe2\x80", "€", "12345678", "x"}
	randomText := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		return sb.String()
	}
	var l likeText
	last := ""
	for i := range 20000 {
		var s string
		switch i % 5 {
		case 0:
			s = randomText(rnd.IntN(40))
		case 1: // the last one's start, a new middle, its end
			cut1, cut2 := rnd.IntN(len(last)+1), rnd.IntN(len(last)+1)
			cut1, cut2 = min(cut1, cut2), max(cut1, cut2)
			s = last[:cut1] + randomText(rnd.IntN(4)) + last[cut2:]
		case 2: // a prefix or a suffix of the last one
			c := rnd.IntN(len(last) + 1)
			if rnd.IntN(2) == 0 {
				s = last[:c]
			} else {
				s = last[c:]
			}
		case 3: // the last one with one byte changed
			b := []byte(last)
			if len(b) > 0 {
				b[rnd.IntN(len(b))] = byte(rnd.IntN(256))
			}
			s = string(b)
		case 4: // a message of the kind the reports hold
			s = fmt.Sprintf(`post executed %d times for identity "entry-%d" (1:post#%d): one effect; make it <idempotent> & retry`,
				rnd.IntN(3), rnd.IntN(10), rnd.IntN(10)) + randomText(rnd.IntN(3))
		}
		got := string(l.append(nil, s))
		if want := string(appendEscaped(nil, s)); got != want {
			t.Fatalf("after %q, %q written as %q, want %q", last, s, got, want)
		}
		last = s
	}
}
