package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
)

// The agents of testdata/compat/README.md, as the AgentIdem Python SDK's
// reports there were written for: read the payment, refund it, and retry
// the refund up to 3 more times on any error; naiveRefund without a key,
// keyedRefund with one the sink enforces.
func naiveRefund(ctx context.Context, b *refund.Bank) error {
	if _, err := b.GetPaymentTraced(ctx, "payment-123"); err != nil {
		return err
	}
	var err error
	for range 4 {
		if _, err = b.RefundTraced(ctx, "payment-123"); err == nil {
			return nil
		}
	}
	return err
}

func keyedRefund(ctx context.Context, b *refund.Bank) error {
	if _, err := b.GetPaymentTraced(ctx, "payment-123"); err != nil {
		return err
	}
	key := idem.Key("refund", "payment-123")
	var err error
	for range 4 {
		if _, err = b.RefundWithKeyTraced(ctx, "payment-123", key); err == nil {
			return nil
		}
	}
	return err
}

// compatReport runs the fault suite of agent and returns its JSON report,
// decoded as a program in another language would see it.
func compatReport(t *testing.T, name string, agent func(context.Context, *refund.Bank) error) map[string]any {
	t.Helper()
	var bank *refund.Bank
	rep, err := runtime.Run(context.Background(), name, func(ctx context.Context) error { return agent(ctx, bank) },
		runtime.Setup(func(context.Context) error { bank = refund.NewBank(100, "payment-123"); return nil }),
		runtime.Invariant("at most one refund", func(*runtime.Trace) error {
			if n := len(bank.Refunds()); n > 1 {
				return fmt.Errorf("%d refunds", n)
			}
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, buf.Bytes())
}

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// shapeChecker compares a fixture with our report: every path of the
// fixture must exist in ours with the same JSON type (null where the
// fixture has null). Array elements are compared index by index (the last
// of ours stands in for extra fixture elements); when our array is empty
// where the fixture's is not, the elements are checked against other, the
// same place in another report of ours (the keyed agent has no duplicates
// where the Python SDK reported false ones: its duplicates are checked
// against the naive agent's).
type shapeChecker struct {
	t        interface{ Errorf(string, ...any) }
	paths    map[string]bool // fixture paths checked, indices as []
	borrowed map[string]bool // paths checked against the other report
}

func (c *shapeChecker) check(path string, fix, ours, other any, borrowed bool) {
	norm := normPath(path)
	c.paths[norm] = true
	if borrowed {
		c.borrowed[norm] = true
	}
	if ft, ot := jsonType(fix), jsonType(ours); ft != ot {
		c.t.Errorf("%s: the AgentIdem report has %s, ours %s (%s)", path, ft, ot, clip(ours))
		return
	}
	if strings.HasSuffix(norm, ".operations[].result") {
		return // the tool's own answer: the agents' data, not the report's shape
	}
	switch f := fix.(type) {
	case map[string]any:
		o := ours.(map[string]any)
		oth, _ := other.(map[string]any)
		keys := make([]string, 0, len(f))
		for k := range f {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := o[k]; !ok {
				c.t.Errorf("%s.%s: absent from our report (the AgentIdem report has %s)", path, k, jsonType(f[k]))
				continue
			}
			c.check(path+"."+k, f[k], o[k], oth[k], borrowed)
		}
	case []any:
		o := ours.([]any)
		oth, _ := other.([]any)
		if len(f) > 0 && len(o) == 0 {
			if len(oth) == 0 {
				c.t.Errorf("%s: empty in our reports, the AgentIdem report has %d elements", path, len(f))
				return
			}
			o, oth, borrowed = oth, nil, true
		}
		for i, e := range f {
			j := min(i, len(o)-1)
			var alt any
			if len(oth) > 0 {
				alt = oth[min(i, len(oth)-1)]
			}
			c.check(fmt.Sprintf("%s[%d]", path, i), e, o[j], alt, borrowed)
		}
	}
}

func normPath(p string) string {
	var b strings.Builder
	skip := false
	for _, r := range p {
		switch {
		case r == '[':
			skip = true
			b.WriteString("[]")
		case r == ']':
			skip = false
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func clip(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// matchResult finds our result for a fixture result: same scenario family
// and phase, the first in run order; nil if none.
func matchResult(ours map[string]any, fix map[string]any) map[string]any {
	results, _ := ours["results"].([]any)
	for _, r := range results {
		r, _ := r.(map[string]any)
		if r["scenario"] == fix["scenario"] && r["phase"] == fix["phase"] {
			return r
		}
	}
	return nil
}

// TestReportIsASupersetOfAgentIdemPython runs the agents the AgentIdem
// Python SDK's reports in testdata/compat were written for and checks that
// every JSON path of those reports is in ours with the same JSON type.
func TestReportIsASupersetOfAgentIdemPython(t *testing.T) {
	naive := compatReport(t, "naive_agent", naiveRefund)
	keyed := compatReport(t, "keyed_agent", keyedRefund)
	for _, tc := range []struct {
		fixture     string
		ours, other map[string]any
	}{
		{"agentidem-python-report-naive.json", naive, keyed},
		{"agentidem-python-report-keyed.json", keyed, naive},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "compat", tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			fix := decodeJSON(t, b)
			c := compareShape(t, fix, tc.ours, tc.other)
			// The paths a reader of the AgentIdem report uses must all have
			// been compared, so that a fixture change cannot empty the test.
			for _, p := range []string{
				"baseline.operations[].args.args[]", "baseline.operations[].args.kwargs", "baseline.operations[].identity",
				"baseline.started_at", "baseline_failure", "results[].phase", "results[].error",
				"results[].operation_index", "results[].duplicates[].operation_ids[]", "results[].findings[].details.args.args[]",
				"results[].trace.operations[].result",
			} {
				if !c.paths[p] {
					t.Errorf("path %s was not compared", p)
				}
			}
			var borrowed []string
			for p := range c.borrowed {
				borrowed = append(borrowed, p)
			}
			sort.Strings(borrowed)
			t.Logf("%d paths compared; %d against the other agent's report (ours has no element there): %s", len(c.paths), len(borrowed), strings.Join(borrowed, ", "))
		})
	}
}

// compareShape checks ours (and other, for elements ours lacks) against
// the fixture fix, reporting each difference to t.
func compareShape(t interface{ Errorf(string, ...any) }, fix, ours, other map[string]any) *shapeChecker {
	c := &shapeChecker{t: t, paths: map[string]bool{}, borrowed: map[string]bool{}}
	for k, v := range fix {
		if k == "results" {
			continue
		}
		if _, ok := ours[k]; !ok {
			t.Errorf("%s: absent from our report", k)
			continue
		}
		c.check(k, v, ours[k], other[k], false)
	}
	for i, r := range fix["results"].([]any) {
		r := r.(map[string]any)
		path := fmt.Sprintf("results[%d]", i)
		mine, alt := matchResult(ours, r), matchResult(other, r)
		if mine == nil {
			t.Errorf("%s: our report has no result with scenario %v and phase %v", path, r["scenario"], r["phase"])
			continue
		}
		c.check(path, r, mine, alt, false)
		if mine["scenario"] != r["scenario"] {
			t.Errorf("%s.scenario = %v, want %v", path, mine["scenario"], r["scenario"])
		}
	}
	return c
}

// errorList collects what a check reports.
type errorList []string

func (e *errorList) Errorf(format string, args ...any) { *e = append(*e, fmt.Sprintf(format, args...)) }

// TestShapeCheckFailsOnVersion1 proves the comparison can fail: the report
// this package wrote before version 2 misses most of the AgentIdem paths.
func TestShapeCheckFailsOnVersion1(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "compat", "agentidem-python-report-naive.json"))
	if err != nil {
		t.Fatal(err)
	}
	v1, err := os.ReadFile(filepath.Join("testdata", "report-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var errs errorList
	compareShape(&errs, decodeJSON(t, fixture), decodeJSON(t, v1), decodeJSON(t, v1))
	joined := strings.Join(errs, "\n")
	for _, want := range []string{"baseline.id: absent", "results[0]: our report has no result", "baseline_failure: absent"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the version 1 report passed a check it fails (%q); reported:\n%s", want, joined)
		}
	}
}

// TestReportPythonValues checks the values that carry AgentIdem meaning,
// beyond their type.
func TestReportPythonValues(t *testing.T) {
	naive := compatReport(t, "naive_agent", naiveRefund)
	if naive["baseline_failure"] != nil {
		t.Errorf("baseline_failure = %v, want null", naive["baseline_failure"])
	}
	base := naive["baseline"].(map[string]any)
	if base["id"] != "baseline" || base["target"] != "naive_agent" {
		t.Errorf("baseline trace id %v target %v", base["id"], base["target"])
	}
	ops := base["operations"].([]any)
	read, write := ops[0].(map[string]any), ops[1].(map[string]any)
	if read["identity"] != nil || write["identity"] != `"payment-123"` {
		t.Errorf("identities: read %v, write %v", read["identity"], write["identity"])
	}
	if args := write["args"].(map[string]any); clip(args) != `{"args":["payment-123"],"kwargs":{}}` {
		t.Errorf("args = %s", clip(args))
	}
	if named := write["named_args"].(map[string]any); named["id"] != "payment-123" {
		t.Errorf("named_args = %s", clip(named))
	}
	phases := map[string]any{}
	for _, r := range naive["results"].([]any) {
		r := r.(map[string]any)
		phases[r["scenario_id"].(string)] = r["phase"]
		if !strings.HasPrefix(r["scenario_id"].(string), r["scenario"].(string)) {
			t.Errorf("scenario %v is not the family of %v", r["scenario"], r["scenario_id"])
		}
		if r["scenario"] == "lost_acknowledgement" {
			d := r["duplicates"].([]any)[0].(map[string]any)
			f := r["findings"].([]any)[0].(map[string]any)
			if d["count"] != 2.0 || len(d["operation_ids"].([]any)) != 2 || f["details"].(map[string]any)["count"] != 2.0 {
				t.Errorf("duplicate %s, finding details %s", clip(d), clip(f["details"]))
			}
			inv := r["invariants"].([]any)[0].(map[string]any)
			if inv["passed"] != false || inv["message"] == nil {
				t.Errorf("invariant %s", clip(inv))
			}
		}
	}
	for id, want := range map[string]any{
		"lost_acknowledgement/refund#1":     "after_operation",
		"before_operation_failure/refund#1": "before_operation",
		"lost_request/refund#1":             "before_operation",
		"duplicate_delivery/sequential":     nil,
	} {
		if phases[id] != want {
			t.Errorf("%s: phase %v, want %v", id, phases[id], want)
		}
	}
}

// TestReportRoundTrip reads back what WriteJSON wrote, and a version 1
// report.
func TestReportRoundTrip(t *testing.T) {
	var bank *refund.Bank
	rep, err := runtime.Run(context.Background(), "naive_agent", func(ctx context.Context) error { return naiveRefund(ctx, bank) },
		runtime.Setup(func(context.Context) error { bank = refund.NewBank(100, "payment-123"); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := runtime.ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := got.WriteJSON(&again); err != nil {
		t.Fatal(err)
	}
	// Tool results come back as JSON objects, so compare as JSON values.
	if a, b := decodeJSON(t, again.Bytes()), decodeJSON(t, buf.Bytes()); !reflect.DeepEqual(a, b) {
		t.Errorf("a report read back writes differently:\n%s\nwant\n%s", again.String(), buf.String())
	}
	if got.Baseline == nil || got.Baseline.Scenario != "baseline" || got.Results[0].Scenario != rep.Results[0].Scenario ||
		got.Results[0].Phase != runtime.PhaseAfter || got.Results[0].Fault == nil || *got.Results[0].Fault != *rep.Results[0].Fault {
		t.Errorf("read back: baseline %+v, first result %+v", got.Baseline, got.Results[0])
	}

	v1, err := runtime.ReadReport(filepath.Join("testdata", "report-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if v1.SchemaVersion != "1" || v1.Baseline == nil || v1.Baseline.Trace == nil || len(v1.Baseline.Trace.Ops) != 2 {
		t.Fatalf("version 1 baseline: %+v", v1.Baseline)
	}
	r0 := v1.Results[0]
	if r0.Scenario != "lost_acknowledgement/refund#1" || r0.Phase != runtime.PhaseAfter || r0.Fault == nil || r0.Fault.Op != "refund" ||
		len(r0.Duplicates) != 1 || len(r0.Duplicates[0].Calls) != 2 || r0.Trace.Ops[1].Args.Names[0] != "id" || r0.Trace.Name != "naive_agent" {
		t.Errorf("version 1 result: %+v", r0)
	}

	python := filepath.Join("testdata", "compat", "agentidem-python-report-naive.json")
	if _, err := runtime.ReadReport(python); err == nil || !strings.Contains(err.Error(), "written by the AgentIdem Python SDK") {
		t.Errorf("a Python SDK report: %v", err)
	}

	future := filepath.Join(t.TempDir(), "future.json")
	if err := os.WriteFile(future, []byte(`{"schema_version":"9"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.ReadReport(future); err == nil || !strings.Contains(err.Error(), `schema_version "9"`) {
		t.Errorf("a future report: %v", err)
	}
}
