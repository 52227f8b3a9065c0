package runtime

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// SchemaVersion is the version of the report's JSON shape. The JSON Schema
// lives in the repository at report.schema.json.
const SchemaVersion = "1"

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
	// CodeGoroutineLeak (warning): a goroutine that made tool calls
	// outlived the agent's invocation. Not in DESIGN.md's first list.
	CodeGoroutineLeak = "goroutine_leak"
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
}

// Duplicate is one effect that happened more than once.
type Duplicate struct {
	Op       string   `json:"operation_name"`
	Identity string   `json:"identity"`
	Count    int      `json:"count"`
	Calls    []string `json:"calls"`
}

// InvariantResult is the outcome of one invariant after one scenario.
type InvariantResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Result is the outcome of one scenario. The JSON names follow the
// AgentIdem report's results[] entries, with additions.
type Result struct {
	// Scenario is the scenario's full name, e.g. "lost_acknowledgement/refund#1".
	Scenario string `json:"scenario"`
	// Kind is the scenario family: baseline, lost_acknowledgement, ...
	Kind string `json:"kind"`
	// OperationIndex is the index in the baseline trace of the targeted
	// call, or -1 for scenarios that target no call.
	OperationIndex int `json:"operation_index"`
	// OperationName is the targeted op, if any.
	OperationName string `json:"operation_name,omitempty"`
	// Phase is "before" or "after" the targeted operation, if any.
	Phase string `json:"phase,omitempty"`
	// Safe: no error finding and the scenario was conclusive.
	Safe bool `json:"safe"`
	// Inconclusive: the planned fault never fired.
	Inconclusive bool `json:"inconclusive,omitempty"`
	// Failed is the execution outcome: the agent returned an error (in any
	// invocation). It is not a safety verdict.
	Failed bool `json:"failed"`
	// Error is the agent's error, if any.
	Error      string            `json:"error,omitempty"`
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
	// Outcome is the canonical JSON of the Outcome option's value after
	// the run, when set.
	Outcome  string        `json:"outcome,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

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
	UnsafeCount       int     `json:"unsafe_count"`
	InconclusiveCount int     `json:"inconclusive_count"`
	BaselineSucceeded bool    `json:"baseline_succeeded"`
	BaselineFailure   string  `json:"baseline_failure,omitempty"`
	Baseline          *Result `json:"baseline"`
	// Results are the fault scenarios, in the order they ran.
	Results []*Result `json:"results"`
	// Findings collects every finding of every scenario, baseline first.
	Findings []Finding `json:"findings"`
	// AgentRuns counts invocations of the agent over the whole suite.
	AgentRuns int       `json:"agent_runs"`
	Seed      int64     `json:"seed"`
	StartedAt time.Time `json:"started_at"`
	// Duration is the wall time of the suite.
	Duration time.Duration `json:"duration_ns"`
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

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadReport reads a report written by WriteJSON.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("reading report %s: %w", path, err)
	}
	if r.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("reading report %s: schema_version %q, want %q", path, r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}

// ReportSchema is the JSON Schema (draft 2020-12) of the report that
// WriteJSON writes, for validating reports in other tools.
//
//go:embed report.schema.json
var ReportSchema []byte
