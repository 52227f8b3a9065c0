package runtime

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/agentidem/agentidem-go/internal/reportfile"
)

// SchemaVersion is the version of the report's JSON shape. The JSON Schema
// lives in the repository at report.schema.json. Version 2 made the report a
// superset of the AgentIdem Python SDK's (see report_compat.go); ReadReport
// still reads version 1.
const SchemaVersion = "2"

// Phases of a fault relative to its targeted operation, as the AgentIdem
// report names them.
const (
	// PhaseBefore: the fault hits before the operation runs.
	PhaseBefore = "before_operation"
	// PhaseAfter: the fault hits after the operation ran.
	PhaseAfter = "after_operation"
)

// Severity ranks a finding.
type Severity string

const (
	// SeverityError fails the test: the agent is unsafe.
	SeverityError Severity = "error"
	// SeverityWarning makes a scenario inconclusive or points at a risk.
	SeverityWarning Severity = "warning"
	// SeverityInfo is context.
	SeverityInfo Severity = "info"
)

// Finding codes, as in DESIGN.md.
const (
	CodeDuplicateWrite           = "duplicate_write"
	CodeMissingWrite             = "missing_write"
	CodeInvariantFailed          = "invariant_failed"
	CodeFaultNotTriggered        = "fault_not_triggered"
	CodeBaselineFailed           = "baseline_failed"
	CodeAgentPanic               = "agent_panic"
	CodeDependentCallsConcurrent = "dependent_calls_concurrent"
	CodeConcurrentWritesEntity   = "concurrent_writes_same_entity"
	CodeOrderVariantOutcome      = "order_variant_outcome"
	CodePartialBatchReplay       = "partial_batch_replay"
	CodeIdentityUnstable         = "identity_unstable"
	// CodeGoroutineLeak (warning): a goroutine the agent started that
	// made tool calls outlived the agent's invocation (a worker Setup or
	// the test started is not one). Not in DESIGN.md's first list.
	CodeGoroutineLeak = "goroutine_leak"
	// CodeStalled: the scenario made no progress for the stall timeout;
	// the finding names what was blocked and where.
	CodeStalled = "stalled"
	// CodeNothingTraced: the baseline traced no tool call, so nothing was
	// tested.
	CodeNothingTraced = "nothing_traced"
	// CodeContextDetached: a tool got a context that does not come from
	// the agent's (a warning, naming the call site), or a call could not be
	// attributed to a run at all (an error).
	CodeContextDetached = "context_detached"
	// CodeIdentityUnencodable: a write's identity could not be encoded, so
	// the call is invisible to duplicate detection.
	CodeIdentityUnencodable = "identity_unencodable"
	// CodeIdentityMissing: a write's identity names arguments that a call
	// did not have (an optional field the model left out), so that call is
	// invisible to duplicate detection (Call.IdentityMissing).
	CodeIdentityMissing = "identity_missing"
	// CodeReadChangedState (warning): with State, in the baseline, the
	// state changed while a call annotated read ran alone: a write
	// annotated read, most likely (readwrites.go).
	CodeReadChangedState = "read_changed_state"
)

// Finding is one thing the suite found wrong (or could not decide).
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Scenario string   `json:"scenario"`
	// Ops and Identities name what is involved.
	Ops        []string `json:"ops,omitempty"`
	Identities []string `json:"identities,omitempty"`
	// Calls are the trace ids of the calls involved.
	Calls []string `json:"calls,omitempty"`
	// Replay is the command line that runs this scenario again.
	Replay string `json:"replay"`
	// Stack is the goroutine stack, for agent_panic.
	Stack string `json:"stack,omitempty"`
	// Details holds the finding's data in the shape of the AgentIdem
	// report's details (for duplicate_write: operation_name, args, count,
	// operation_ids). It is written as {} when nil.
	Details map[string]any `json:"details"`
	// Follows lists the duplicates that follow from this one: the later
	// writes declared idempotent of an invocation that a crash or a second
	// delivery repeated, which did their work again on what this
	// duplicate left (a drain running a job queued twice). A later write
	// not declared idempotent is a duplicate of its own, with a finding
	// of its own.
	Follows []string `json:"follows,omitempty"`
	// SeenIn lists every scenario that shows this finding, with its
	// replay line, in the report's Problems (one finding per code, op and
	// identity); empty in a scenario's own findings.
	SeenIn []Occurrence `json:"seen_in,omitempty"`
}

// Duplicate is one effect that happened more than once.
type Duplicate struct {
	Op string `json:"operation_name"`
	// Args are the arguments of the first of the calls; in JSON
	// {"args": [...], "kwargs": {}} as in the AgentIdem report.
	Args     Args   `json:"args"`
	Identity string `json:"identity"`
	Count    int    `json:"count"`
	// Calls are the trace ids of the calls (JSON operation_ids).
	Calls []string `json:"operation_ids"`
}

// InvariantResult is the outcome of one invariant after one scenario. In
// JSON: {"name", "passed", "message"}, message null when it passed.
type InvariantResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"passed"`
	Error string `json:"message"`
}

// Result is the outcome of one scenario. The JSON names follow the
// AgentIdem report's results[] entries, with additions.
type Result struct {
	// Scenario is the scenario's full name, e.g. "lost_acknowledgement/refund#1"
	// (JSON scenario_id; JSON scenario is the family, as in the AgentIdem
	// report: "lost_acknowledgement").
	Scenario string `json:"scenario_id"`
	// Kind is the scenario family: baseline, lost_acknowledgement, ...
	Kind string `json:"kind"`
	// OperationIndex is the index in the baseline trace of the targeted
	// call, or -1 for scenarios that target no call.
	OperationIndex int `json:"operation_index"`
	// OperationName is the targeted op, if any.
	OperationName string `json:"operation_name,omitempty"`
	// Phase is PhaseBefore or PhaseAfter the targeted operation, if any.
	Phase string `json:"phase,omitempty"`
	// Safe: no error finding and the scenario was conclusive.
	Safe bool `json:"safe"`
	// Inconclusive: the scenario could not decide: its planned fault never
	// fired (fault_not_triggered), it stalled, or a goroutine its agent
	// left running made calls after it ended (goroutine_leak).
	Inconclusive bool `json:"inconclusive,omitempty"`

	// late counts the calls its run's goroutines made after it ended
	// (late.go), until the suite's report.
	late *lateCalls
	// left holds the goroutines its invocations started that were still
	// there when its run ended, when the baseline showed the agent's
	// leftover goroutines making calls (Suite.leavesCallers): the report
	// waits for them (late.go).
	left map[uint64]bool
	// Failed is the execution outcome: the agent returned an error (in any
	// invocation). It is not a safety verdict.
	Failed bool `json:"failed"`
	// Error is the agent's error, if any (JSON null when none).
	Error      string            `json:"error"`
	Fault      *Fault            `json:"fault,omitempty"`
	FaultFired bool              `json:"fault_fired"`
	Trace      *Trace            `json:"trace"`
	Invariants []InvariantResult `json:"invariants"`
	Duplicates []Duplicate       `json:"duplicates"`
	Findings   []Finding         `json:"findings"`
	// Replay is the command line that runs this scenario again.
	Replay string `json:"replay"`
	// Schedule is the printable schedule of an interleaving scenario.
	Schedule string `json:"schedule,omitempty"`
	// Legend names the calls the schedule numbers: "s0 = createInvoice#1,
	// s1 = attachInvoice#1" (rounds after the first as "; round 2: ...").
	Legend string `json:"legend,omitempty"`
	// Outcome is the canonical JSON of the Outcome option's value after
	// the run, when set.
	Outcome  string        `json:"outcome,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Clock is the time the scenario ran on: ClockReal, or ClockVirtual
	// inside a testing/synctest bubble (see testkit.VirtualTime).
	Clock string `json:"clock,omitempty"`
}

// Clocks a scenario runs on.
const (
	ClockReal    = "real"
	ClockVirtual = "virtual"
)

// Report is the outcome of a whole suite. Its JSON is a superset of the
// AgentIdem Python SDK's report.
type Report struct {
	SchemaVersion string `json:"schema_version"`
	Name          string `json:"name"`
	// Safe: the baseline succeeded and no scenario has an error finding.
	Safe bool `json:"safe"`
	// FaultCount is the number of fault scenarios run (baseline excluded).
	FaultCount int `json:"fault_count"`
	// UnsafeCount is the number of scenarios with an error finding.
	UnsafeCount int `json:"unsafe_count"`
	// InconclusiveCount is the number of fault scenarios that are
	// inconclusive (baseline excluded, as in fault_count and the
	// AgentIdem report); Baseline.Inconclusive says the baseline's.
	InconclusiveCount int  `json:"inconclusive_count"`
	BaselineSucceeded bool `json:"baseline_succeeded"`
	// BaselineFailure says why the baseline failed. In JSON it is
	// {"error_type", "message"}, or null, as in the AgentIdem report.
	BaselineFailure string `json:"baseline_failure"`
	// Baseline is the fault-free run. In JSON, "baseline" is its trace
	// (as in the AgentIdem report) and "baseline_result" the whole result.
	Baseline *Result `json:"baseline_result"`
	// Results are the fault scenarios, in the order they ran.
	Results []*Result `json:"results"`
	// Findings collects every finding of every scenario, baseline first.
	Findings []Finding `json:"findings"`
	// Problems holds one finding per problem (GroupFindings): the findings
	// of several scenarios with one code, op and identity are one, whose
	// SeenIn lists every scenario that shows it with its replay line. The
	// text and HTML reports and the go test output show these.
	Problems []Finding `json:"problems,omitempty"`
	// Notes say what the verdict does not: a fact about the whole suite
	// that no scenario shows, and what to do about it (no injected fault
	// was retried: FaultError). None is a finding, or fails anything; the
	// text and HTML reports print them under the verdict.
	Notes []string `json:"notes,omitempty"`
	// AgentRuns counts invocations of the agent over the whole suite.
	AgentRuns int       `json:"agent_runs"`
	Seed      int64     `json:"seed"`
	StartedAt time.Time `json:"started_at"`
	// Duration is the wall time of the suite.
	Duration time.Duration `json:"duration_ns"`
	// Shard says which part of a sharded schedule exploration the report
	// holds (nil: not sharded); a merged report says which shards it joins
	// (MergeShards).
	Shard *Shard `json:"shard,omitempty"`
}

// Errors returns the findings of severity error.
func (r *Report) Errors() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			out = append(out, f)
		}
	}
	return out
}

// Has reports whether any finding has the given code.
func (r *Report) Has(code string) bool {
	for _, f := range r.Findings {
		if f.Code == code {
			return true
		}
	}
	return false
}

// WriteJSON writes the report as indented JSON (two spaces, a final
// newline), what a json.Encoder with SetIndent("", "  ") writes, except
// that each operation of a trace, each finding and each duplicate is
// written compact on a line of its own.
func (r *Report) WriteJSON(w io.Writer) error {
	buf := reportBuffer.Swap(nil)
	if buf == nil {
		b := make([]byte, 0, reportSize.Load()+4<<10)
		buf = &b
	}
	rw := reportWriter{indent: true, b: (*buf)[:0]}
	rw.report(r)
	rw.b = append(rw.b, '\n')
	if cap(rw.b) <= maxKeptReportBuffer {
		*buf = rw.b[:0]
		defer reportBuffer.Store(buf)
	}
	if rw.err != nil {
		return rw.err
	}
	reportSize.Store(int64(len(rw.b)))
	_, err := w.Write(rw.b)
	return err
}

// reportBuffer holds the buffer of the last WriteJSON, and reportSize is
// the length of the last report written, the size of a new one: a suite's
// report file is hundreds of kilobytes, and testkit writes one per test.
// The buffer is kept for the life of the process (up to
// maxKeptReportBuffer), not in a sync.Pool, which every GC cycle empties:
// a test binary runs a cycle every few suites, and a new buffer of that
// size cost more than the encoding (with GOMAXPROCS=2, the ten-write
// suite's report took 1.5-1.7 ms to encode from a pooled buffer and
// 0.55 ms from the kept one). Two writes at once allocate for the second.
var (
	reportBuffer atomic.Pointer[[]byte]
	reportSize   atomic.Int64
)

// maxKeptReportBuffer is the largest buffer WriteJSON keeps.
const maxKeptReportBuffer = 16 << 20

// ReadReport reads a report written by WriteJSON, of this schema version or
// of version 1 (written before the AgentIdem-compatible shape). A file
// that is not a report (not a JSON object, no schema_version, a golden
// trace of testkit.Golden, fields of other JSON types than a report's) is
// refused with an error that says so and where, in JSON's terms.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	version, members, err := reportfile.Sniff(path, b)
	if err != nil {
		return nil, err
	}
	if version == "1" && isNull(members["name"]) {
		var baseline struct {
			Operations json.RawMessage `json:"operations"`
		}
		if json.Unmarshal(members["baseline"], &baseline) == nil && baseline.Operations != nil {
			return nil, fmt.Errorf("reading report %s: written by the AgentIdem Python SDK (no name, the baseline is a trace); this reads reports of agentidem-go, whose JSON is a superset of that one", path)
		}
	}
	if version != SchemaVersion && version != "1" {
		return nil, fmt.Errorf("reading report %s: schema_version %q is not one this version reads (%q or \"1\"); render it with the agentidem-gen of the agentidem-go that wrote it", path, version, SchemaVersion)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, reportfile.Undecodable(path, err)
	}
	return &r, nil
}

// isNull reports whether a member is absent or null.
func isNull(v json.RawMessage) bool {
	return v == nil || string(bytes.TrimSpace(v)) == "null"
}

// ReportSchema is the JSON Schema (draft 2020-12) of the report that
// WriteJSON writes, for validating reports in other tools.
//
//go:embed report.schema.json
var ReportSchema []byte
