package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unsafe"
)

// The report's JSON is a superset of the report the AgentIdem Python SDK
// writes (report_to_dict): every field it has is present here under the
// same name, with the same JSON type and null where it writes null, and
// this package's own fields sit beside them. Where the two disagree on a
// name, the AgentIdem meaning keeps the name and ours moves:
//
//	baseline               the baseline's trace; the whole result is baseline_result
//	baseline_failure       {"error_type", "message"} or null
//	results[].scenario     the family (lost_acknowledgement); the full name is scenario_id
//	results[].phase        after_operation / before_operation / null
//	results[].error        the agent's error or null
//	operation_index, _name null for scenarios that target no call
//	invariants[]           {name, passed, message}, message null when passed
//	duplicates[]           {operation_name, args, count, operation_ids} and identity
//	findings[].details     {} or, for duplicate_write, the duplicate
//	operations[].args      {"args": [values in parameter order], "kwargs": {}};
//	                       the named arguments are named_args
//	operations[].identity, result, error   null when there is none
//
// The Go types keep their fields; only their JSON changed. Unmarshalling
// reads this shape and the version 1 shape.

// positional writes recorded arguments as the AgentIdem report does:
// {"args": [values in parameter order], "kwargs": {}}. Go has no keyword
// arguments, so kwargs is always empty; the names are in named_args.
type positional Args

// MarshalJSON writes {"args": [...], "kwargs": {}}.
func (p positional) MarshalJSON() ([]byte, error) {
	b := []byte(`{"args":[`)
	for i, v := range p.Values {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendValue(b, v)
	}
	return append(b, `],"kwargs":{}}`...), nil
}

// readArgs decodes arguments written as named_args (this shape), as a named
// object (version 1) or as {"args": [...], "kwargs": {...}} only (an
// AgentIdem report).
func readArgs(named *Args, raw json.RawMessage) (Args, error) {
	if named != nil {
		return *named, nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return Args{}, nil
	}
	var pos struct {
		Args   []any          `json:"args"`
		Kwargs map[string]any `json:"kwargs"`
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err == nil && len(keys) == 2 && keys["args"] != nil && keys["kwargs"] != nil {
		if err := json.Unmarshal(raw, &pos); err == nil {
			a := Args{Values: pos.Args}
			for i := range pos.Args {
				a.Names = append(a.Names, fmt.Sprintf("arg%d", i))
			}
			for k, v := range pos.Kwargs {
				a.Names, a.Values = append(a.Names, k), append(a.Values, v)
			}
			return a, nil
		}
	}
	var a Args
	err := a.UnmarshalJSON(raw)
	return a, err
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// The types below are the JSON shapes of traces, results, operations and
// findings, without MarshalJSON methods of their own: each part is encoded
// in one pass. (encoding/json compacts again whatever a MarshalJSON method
// returns, so nested methods would encode an operation once per level above
// it.) A whole report is written by reportWriter (report_encode.go), by
// hand, to the bytes encoding/json writes for these shapes: a change here
// goes there too, and TestReportEncoderMatchesReflection says where.

// operationJSON is an operation with the AgentIdem trace's fields.
type operationJSON struct {
	plainOperation
	Args        positional `json:"args"`
	NamedArgs   Args       `json:"named_args"`
	Identity    *string    `json:"identity"`
	Result      any        `json:"result"`
	Error       *string    `json:"error"`
	CompletedAt *time.Time `json:"completed_at"`
	// HTTPRequests are the requests the call sent through Transport.
	HTTPRequests []sentRequest `json:"http_requests,omitempty"`
}

type plainOperation Operation

func (o *Operation) wire() operationJSON {
	w := operationJSON{plainOperation: plainOperation(*o), Args: positional(o.Args), NamedArgs: o.Args, Result: o.Result, Error: nullable(o.Error)}
	if o.Kind == KindWrite {
		id := o.Identity
		w.Identity = &id
	}
	if !o.CompletedAt.IsZero() {
		w.CompletedAt = &o.CompletedAt
	}
	w.HTTPRequests = o.sent()
	return w
}

// MarshalJSON writes the operation with the AgentIdem trace's fields.
func (o Operation) MarshalJSON() ([]byte, error) { return json.Marshal(o.wire()) }

// UnmarshalJSON reads an operation of either schema version.
func (o *Operation) UnmarshalJSON(b []byte) error {
	type plain Operation
	w := struct {
		*plain
		Args        json.RawMessage `json:"args"`
		NamedArgs   *Args           `json:"named_args"`
		Identity    *string         `json:"identity"`
		Error       *string         `json:"error"`
		CompletedAt *time.Time      `json:"completed_at"`
		Sent        []sentRequest   `json:"http_requests"`
	}{plain: (*plain)(o)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	args, err := readArgs(w.NamedArgs, w.Args)
	if err != nil {
		return fmt.Errorf("operation %s: args: %w", o.ID, err)
	}
	o.Args, o.Identity, o.Error = args, str(w.Identity), str(w.Error)
	if w.CompletedAt != nil {
		o.CompletedAt = *w.CompletedAt
	}
	if len(w.Sent) > 0 {
		o.more = &opMore{sent: w.Sent}
	}
	return nil
}

// MarshalJSON writes the trace; a trace without times takes them from its
// calls.
func (t Trace) MarshalJSON() ([]byte, error) { return json.Marshal(t.wire()) }

// traceJSON is a trace whose operations are encoded in the same pass. Its
// fields are Trace's, in the same order (TestTraceJSONHasTraceFields).
type traceJSON struct {
	ID           string          `json:"id"`
	Name         string          `json:"target"`
	StartedAt    time.Time       `json:"started_at"`
	CompletedAt  time.Time       `json:"completed_at"`
	Ops          []operationJSON `json:"operations"`
	Panics       []Panic         `json:"panics,omitempty"`
	Errors       []string        `json:"errors,omitempty"`
	Fault        *Fault          `json:"fault,omitempty"`
	Fired        bool            `json:"fired,omitempty"`
	FaultNote    string          `json:"fault_note,omitempty"`
	Invocations  int             `json:"invocations"`
	Notes        []string        `json:"notes,omitempty"`
	Detached     []string        `json:"detached,omitempty"`
	Refused      []string        `json:"refused,omitempty"`
	Unattributed []string        `json:"unattributed,omitempty"`
}

type plainTrace Trace

func (t *Trace) wire() *traceJSON {
	if t == nil {
		return nil
	}
	p := plainTrace(*t)
	p.StartedAt, p.CompletedAt = t.times()
	w := &traceJSON{
		ID: p.ID, Name: p.Name, StartedAt: p.StartedAt, CompletedAt: p.CompletedAt, Ops: make([]operationJSON, len(t.Ops)),
		Panics: p.Panics, Errors: p.Errors, Fault: p.Fault, Fired: p.Fired, FaultNote: p.FaultNote,
		Invocations: p.Invocations, Notes: p.Notes, Detached: p.Detached, Refused: p.Refused,
		Unattributed: p.Unattributed,
	}
	for i := range t.Ops {
		w.Ops[i] = t.Ops[i].wire()
	}
	return w
}

// times returns the trace's start and end; a trace without them takes them
// from its calls.
func (t *Trace) times() (start, end time.Time) {
	start, end = t.StartedAt, t.CompletedAt
	if t.StartedAt.IsZero() {
		for i := range t.Ops {
			o := &t.Ops[i]
			if !o.StartedAt.IsZero() && (start.IsZero() || o.StartedAt.Before(start)) {
				start = o.StartedAt
			}
		}
	}
	if t.CompletedAt.IsZero() {
		for i := range t.Ops {
			if o := &t.Ops[i]; o.CompletedAt.After(end) {
				end = o.CompletedAt
			}
		}
		if end.Before(start) {
			end = start
		}
	}
	return start, end
}

// UnmarshalJSON reads a trace of either schema version.
func (t *Trace) UnmarshalJSON(b []byte) error {
	type plain Trace
	w := struct {
		*plain
		Name *string `json:"name"` // version 1
	}{plain: (*plain)(t)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Name != nil && t.Name == "" {
		t.Name = *w.Name
	}
	return nil
}

// withID returns a copy of t with the given ID, for embedding in a result.
func (t *Trace) withID(id string) *Trace {
	if t == nil {
		return nil
	}
	c := *t
	if id != "" {
		c.ID = id
	}
	return &c
}

// argsOf returns the arguments of the call with trace id id.
func (t *Trace) argsOf(id string) Args {
	for i := range t.Ops {
		if t.Ops[i].ID == id {
			return t.Ops[i].Args
		}
	}
	return Args{}
}

// duplicateDetails is a duplicate_write finding's details: the duplicate as
// the AgentIdem report writes it.
//
// The values that boxing would each put in memory of their own (the name,
// the identity, the arguments, the list of ids and, for the two calls of
// most duplicates, its array) share one allocation, made interface values
// by packAny: 7 allocations a finding to 3, 299 a ten-write suite (of
// 3,872), and its 75 findings' details 27 to 16 µs of CPU profile
// (GOMAXPROCS=1, 6,000 and 8,000 suites). The maps and the values are the same
// as boxed ones to every reader: nothing writes to them after.
func duplicateDetails(d Duplicate) map[string]any {
	x := &dupDetails{op: d.Op, identity: d.Identity, args: positional(d.Args)}
	if len(d.Calls) <= len(x.two) {
		x.ids = x.two[:len(d.Calls):len(d.Calls)]
	} else {
		x.ids = make([]string, len(d.Calls))
	}
	copy(x.ids, d.Calls)
	return map[string]any{
		"operation_name": packAny(stringType, unsafe.Pointer(&x.op)),
		"args":           packAny(positionalType, unsafe.Pointer(&x.args)),
		"identity":       packAny(stringType, unsafe.Pointer(&x.identity)),
		"count":          d.Count,
		"operation_ids":  packAny(stringsType, unsafe.Pointer(&x.ids)),
	}
}

// dupDetails holds the values of a duplicate's details (duplicateDetails).
type dupDetails struct {
	op, identity string
	args         positional
	ids          []string
	two          [2]string
}

// The dynamic types of duplicateDetails's values, read off zero values,
// whose boxing allocates nothing.
var (
	stringType     = typeOf("")
	positionalType = typeOf(positional{})
	stringsType    = typeOf([]string(nil))
)

// MarshalJSON writes the duplicate with args as {"args", "kwargs"}.
func (d Duplicate) MarshalJSON() ([]byte, error) {
	type plain Duplicate
	w := struct {
		plain
		Args      positional `json:"args"`
		NamedArgs Args       `json:"named_args"`
		Calls     []string   `json:"operation_ids"`
	}{plain: plain(d), Args: positional(d.Args), NamedArgs: d.Args, Calls: d.Calls}
	if w.Calls == nil {
		w.Calls = []string{}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a duplicate of either schema version.
func (d *Duplicate) UnmarshalJSON(b []byte) error {
	type plain Duplicate
	w := struct {
		*plain
		Args      json.RawMessage `json:"args"`
		NamedArgs *Args           `json:"named_args"`
		Calls     []string        `json:"calls"` // version 1
	}{plain: (*plain)(d)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	args, err := readArgs(w.NamedArgs, w.Args)
	if err != nil {
		return fmt.Errorf("duplicate %s: args: %w", d.Op, err)
	}
	d.Args = args
	if d.Calls == nil {
		d.Calls = w.Calls
	}
	return nil
}

// MarshalJSON writes {"name", "passed", "message"}, message null when the
// invariant held.
func (ir InvariantResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name    string  `json:"name"`
		Passed  bool    `json:"passed"`
		Message *string `json:"message"`
	}{ir.Name, ir.OK, nullable(ir.Error)})
}

// UnmarshalJSON reads an invariant result of either schema version.
func (ir *InvariantResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Name    string  `json:"name"`
		Passed  *bool   `json:"passed"`
		Message *string `json:"message"`
		OK      *bool   `json:"ok"`    // version 1
		Error   *string `json:"error"` // version 1
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*ir = InvariantResult{Name: w.Name}
	switch {
	case w.Passed != nil:
		ir.OK, ir.Error = *w.Passed, str(w.Message)
	case w.OK != nil:
		ir.OK, ir.Error = *w.OK, str(w.Error)
	}
	return nil
}

// MarshalJSON writes the finding with details ({} when it has none).
func (f Finding) MarshalJSON() ([]byte, error) { return json.Marshal(f.wire()) }

// findingJSON is a finding whose details are {} when it has none.
type findingJSON plainFinding

type plainFinding Finding

func (f *Finding) wire() findingJSON {
	p := findingJSON(*f)
	if p.Details == nil {
		p.Details = map[string]any{}
	}
	return p
}

func findingsWire(fs []Finding) []findingJSON {
	out := make([]findingJSON, len(fs))
	for i := range fs {
		out[i] = fs[i].wire()
	}
	return out
}

// Family returns the AgentIdem scenario name of a scenario kind: the kind
// up to its first "/" (duplicate_delivery for duplicate_delivery/concurrent).
func Family(kind string) string {
	if i := strings.IndexByte(kind, '/'); i >= 0 {
		return kind[:i]
	}
	return kind
}

// MarshalJSON writes the result with the AgentIdem fields first.
func (r Result) MarshalJSON() ([]byte, error) { return json.Marshal(r.wire()) }

// resultJSON is a result with the AgentIdem fields first.
type resultJSON struct {
	Scenario       string            `json:"scenario"`
	OperationIndex *int              `json:"operation_index"`
	OperationName  *string           `json:"operation_name"`
	Phase          *string           `json:"phase"`
	Safe           bool              `json:"safe"`
	Failed         bool              `json:"failed"`
	Error          *string           `json:"error"`
	Trace          *traceJSON        `json:"trace"`
	Invariants     []InvariantResult `json:"invariants"`
	Duplicates     []Duplicate       `json:"duplicates"`
	Findings       []findingJSON     `json:"findings"`
	plainResult
}

type plainResult Result

func (r *Result) wire() *resultJSON {
	if r == nil {
		return nil
	}
	kind := r.Kind
	if kind == "" {
		kind = r.Scenario
	}
	w := &resultJSON{
		Scenario: Family(kind), OperationName: nullable(r.OperationName), Phase: nullable(r.Phase),
		Safe: r.Safe, Failed: r.Failed, Error: nullable(r.Error), Trace: r.Trace.withID(r.Scenario).wire(),
		Invariants: r.Invariants, Duplicates: r.Duplicates, Findings: findingsWire(r.Findings), plainResult: plainResult(*r),
	}
	if r.OperationIndex >= 0 {
		i := r.OperationIndex
		w.OperationIndex = &i
	}
	if w.Invariants == nil {
		w.Invariants = []InvariantResult{}
	}
	if w.Duplicates == nil {
		w.Duplicates = []Duplicate{}
	}
	return w
}

// UnmarshalJSON reads a result of either schema version.
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	w := struct {
		*plain
		Scenario       string  `json:"scenario"`
		ScenarioID     *string `json:"scenario_id"`
		OperationIndex *int    `json:"operation_index"`
		Phase          *string `json:"phase"`
		Error          *string `json:"error"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	r.Scenario = w.Scenario // version 1: the full name
	if w.ScenarioID != nil {
		r.Scenario = *w.ScenarioID
	}
	r.OperationIndex = -1
	if w.OperationIndex != nil {
		r.OperationIndex = *w.OperationIndex
	}
	switch p := str(w.Phase); p {
	case "before": // version 1
		r.Phase = PhaseBefore
	case "after":
		r.Phase = PhaseAfter
	default:
		r.Phase = p
	}
	r.Error = str(w.Error)
	return nil
}

// baselineFailure is the AgentIdem report's baseline_failure. Go errors
// have no class name; error_type says how the baseline failed: "error" (the
// agent returned one), "panic", or "setup" (Setup failed).
type baselineFailure struct {
	ErrorType string `json:"error_type"`
	Message   string `json:"message"`
}

// failureJSON returns the report's baseline_failure, nil when the
// baseline did not fail.
func (r *Report) failureJSON() *baselineFailure {
	if r.BaselineFailure == "" && (r.Baseline == nil || r.BaselineSucceeded) {
		return nil
	}
	bf := &baselineFailure{ErrorType: "error", Message: r.BaselineFailure}
	switch {
	case strings.HasPrefix(r.BaselineFailure, "setup: "):
		bf.ErrorType = "setup"
	case strings.HasPrefix(r.BaselineFailure, "panic: "),
		// The agent's failure reads "delivery 1: agent panicked: ...", or
		// the error it returned for a tool's panic: the trace holds it.
		r.Baseline != nil && r.Baseline.Trace != nil && len(r.Baseline.Trace.Panics) > 0:
		bf.ErrorType = "panic"
	}
	return bf
}

// MarshalJSON writes the report with the AgentIdem fields first, in the
// shape of the wire types above (see reportWriter).
func (r Report) MarshalJSON() ([]byte, error) {
	w := reportWriter{b: make([]byte, 0, 64<<10)}
	w.report(&r)
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

// UnmarshalJSON reads a report of either schema version.
func (r *Report) UnmarshalJSON(b []byte) error {
	type plain Report
	w := struct {
		*plain
		Baseline        json.RawMessage `json:"baseline"`
		BaselineFailure json.RawMessage `json:"baseline_failure"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if raw := bytes.TrimSpace(w.Baseline); r.Baseline == nil && r.SchemaVersion == "1" && len(raw) > 0 && string(raw) != "null" {
		var res Result // version 1: the baseline was the whole result
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		r.Baseline = &res
	}
	switch raw := bytes.TrimSpace(w.BaselineFailure); {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '"': // version 1
		return json.Unmarshal(raw, &r.BaselineFailure)
	default:
		var bf baselineFailure
		if err := json.Unmarshal(raw, &bf); err != nil {
			return fmt.Errorf("baseline_failure: %w", err)
		}
		r.BaselineFailure = bf.Message
	}
	return nil
}
