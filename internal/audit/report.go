package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// ErrNoSpans is returned by Files when the input holds no span with
// agentidem attributes: an audit of nothing is not a clean audit.
var ErrNoSpans = errors.New("no span carries agentidem.op: is agentidemotel.Install called at start-up, and are these the exported spans of that program?")

// Files audits the named files, "-" standing for standard input. It fails
// when a file cannot be read or when no file holds an agentidem span; bad
// input within the files is skipped and counted in the Result.
func Files(cfg Config, names []string, stdin io.Reader) (*Result, error) {
	a := New(cfg)
	var st Stats
	add := func(s *Span) error { a.Add(s); return nil }
	for _, name := range names {
		if name == "-" {
			if err := Read("<stdin>", stdin, &st, add); err != nil {
				return nil, err
			}
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		err = Read(name, f, &st, add)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	res := a.Result(st)
	if st.Ours == 0 {
		return res, ErrNoSpans
	}
	return res, nil
}

// Safe reports whether the audit found no error.
func (r *Result) Safe() bool {
	for _, f := range r.Findings {
		if f.Severity == runtime.SeverityError {
			return false
		}
	}
	return r.Stats.Ours > 0
}

// Notes are what the reader could not use or what limits the audit, one line
// each: skipped input, several digest keys, traces left out of the window.
func (r *Result) Notes() []string {
	st := r.Stats
	var out []string
	if st.Bad > 0 {
		out = append(out, fmt.Sprintf("%d malformed or truncated inputs skipped", st.Bad))
		out = append(out, st.Problems...)
		if st.Bad > len(st.Problems) {
			out = append(out, fmt.Sprintf("... and %d more", st.Bad-len(st.Problems)))
		}
	} else if len(st.Problems) > 0 {
		out = append(out, st.Problems...)
	}
	if st.OtherSchema > 0 {
		out = append(out, fmt.Sprintf("%d JSON objects of another schema skipped", st.OtherSchema))
	}
	if len(r.KeyIDs) > 1 {
		ids := make([]string, 0, len(r.KeyIDs))
		for k := range r.KeyIDs {
			ids = append(ids, k)
		}
		sort.Strings(ids)
		out = append(out, fmt.Sprintf("the spans carry %d digest keys (%s): identities are matched only between spans of one key, so duplicates across processes or restarts with different keys are not seen; give every process the same $AGENTIDEM_IDENTITY_KEY", len(ids), strings.Join(ids, ", ")))
	}
	if r.Absorbed+r.Updates > 0 {
		out = append(out, fmt.Sprintf("repeats of ops declared idempotent: %d absorbed (same arguments), %d updates (other arguments); not duplicates", r.Absorbed, r.Updates))
	}
	if r.Forgotten > 0 {
		out = append(out, fmt.Sprintf("%d write identities older than the duplicate window were forgotten: a repeat of them later than that is not seen", r.Forgotten))
	}
	if r.Repeated > 0 {
		out = append(out, fmt.Sprintf("%d spans were read more than once (same trace and span id) and counted once", r.Repeated))
	}
	if r.LongTraces > 0 {
		out = append(out, fmt.Sprintf("%d traces had more spans than the audit compares per trace; ordering and retries were checked on their first spans only", r.LongTraces))
	}
	return out
}

// WriteText prints a readable summary.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	st := r.Stats
	verdict := "CLEAN"
	if !r.Safe() {
		verdict = "UNSAFE"
	}
	if st.Ours == 0 {
		verdict = "NOTHING TO AUDIT"
	}
	fmt.Fprintf(&b, "audit: %s: %d spans with agentidem attributes (%d spans read, %d without them), %s\n",
		verdict, st.Ours, st.Spans, st.Foreign, plural(len(r.Findings), "finding"))
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n%s %s: %s\n", f.Severity, f.Code, f.Message)
		for _, s := range f.Spans {
			fmt.Fprintf(&b, "  %-6s %s trace %s span %s %s .. %s (%s)\n", s.Status, s.Op, s.TraceID, s.SpanID,
				s.Start.Format(time.RFC3339Nano), s.End.Format(time.RFC3339Nano), s.Pos)
		}
		if f.Code == runtime.CodeDuplicateWrite && f.Count > len(f.Spans) {
			fmt.Fprintf(&b, "  ... and %d more executions\n", f.Count-len(f.Spans))
		}
	}
	if notes := r.Notes(); len(notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, s string) string {
	if n == 1 {
		return "1 " + s
	}
	return strconv.Itoa(n) + " " + s + "s"
}

// Report returns the audit as a fault-suite report (the same JSON schema, so
// agentidem-gen report renders it as text, HTML or JUnit): one result per
// finding, whose trace holds the spans involved as operations (one
// invocation per trace id), after a first result "audit" that lists the
// notes. name names the report; replay is the command line of the audit.
func (r *Result) Report(name, replay string, started time.Time, took time.Duration) *runtime.Report {
	rep := &runtime.Report{SchemaVersion: runtime.SchemaVersion, Name: name, BaselineSucceeded: true,
		Results: []*runtime.Result{}, Findings: []runtime.Finding{}, StartedAt: started, Duration: took}
	input := &runtime.Result{Scenario: "audit", Kind: "audit", OperationIndex: -1, Safe: r.Stats.Ours > 0,
		Trace:      &runtime.Trace{Name: "input", Ops: []runtime.Operation{}, Errors: r.Notes()},
		Invariants: []runtime.InvariantResult{}, Duplicates: []runtime.Duplicate{}, Findings: []runtime.Finding{}, Replay: replay}
	if r.Stats.Ours == 0 {
		input.Error = ErrNoSpans.Error()
	}
	rep.Results = append(rep.Results, input)
	seen := map[string]int{}
	for _, f := range r.Findings {
		scen := "audit/" + f.Code + "/" + strings.Join(f.Ops, ",")
		seen[scen]++
		if seen[scen] > 1 {
			scen += "#" + strconv.Itoa(seen[scen])
		}
		res := &runtime.Result{Scenario: scen, Kind: "audit", OperationIndex: -1, OperationName: f.Ops[0],
			Safe: f.Severity != runtime.SeverityError, Trace: spansTrace(f.Spans),
			Invariants: []runtime.InvariantResult{}, Duplicates: []runtime.Duplicate{}, Replay: replay}
		rf := f.Finding
		rf.Scenario, rf.Replay = scen, replay
		for _, o := range res.Trace.Ops {
			rf.Calls = append(rf.Calls, o.ID)
		}
		if f.Code == runtime.CodeDuplicateWrite {
			res.Duplicates = append(res.Duplicates, runtime.Duplicate{Op: f.Ops[0], Identity: f.Identities[0], Count: f.Count, Calls: rf.Calls})
		}
		res.Findings = []runtime.Finding{rf}
		rep.Findings = append(rep.Findings, rf)
		if !res.Safe {
			rep.UnsafeCount++
		}
		rep.Results = append(rep.Results, res)
	}
	rep.Safe = r.Safe()
	return rep
}

// spansTrace turns the spans of a finding into a trace: one invocation per
// trace id, in order of first appearance.
func spansTrace(spans []SpanRef) *runtime.Trace {
	tr := &runtime.Trace{Name: "spans", Ops: []runtime.Operation{}}
	inv := map[string]int{}
	occ := map[string]int{}
	for i, s := range spans {
		n, ok := inv[s.TraceID]
		if !ok {
			n = len(inv) + 1
			inv[s.TraceID] = n
		}
		occ[s.Op]++
		kind := runtime.KindRead
		if s.Kind == "write" {
			kind = runtime.KindWrite
		}
		o := runtime.Operation{ID: fmt.Sprintf("%d:%s#%d", n, s.Op, occ[s.Op]), Name: s.Op, Kind: kind,
			Identity: s.Identity, Status: runtime.Status(s.Status), Observation: runtime.ObservationReceived,
			Invocation: n, Occurrence: occ[s.Op], Seq: i, StartedAt: s.Start, CompletedAt: s.End,
			// What the audit knows of the call is where its span is.
			Args: runtime.Args{Names: []string{"trace_id", "span_id", "input"}, Values: []any{s.TraceID, s.SpanID, s.Pos}}}
		if o.Status == runtime.StatusFailed {
			o.Observation = runtime.ObservationFailed
		}
		tr.Ops = append(tr.Ops, o)
	}
	tr.Invocations = len(inv)
	return tr
}
