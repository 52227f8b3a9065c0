package render

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

func renderJUnit(t testing.TB, rep *runtime.Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := JUnit(&buf, rep); err != nil {
		t.Fatalf("JUnit: %v", err)
	}
	return buf.Bytes()
}

// parseJUnit decodes the document strictly, token by token first so that
// any malformed XML fails, then into the schema.
func parseJUnit(t testing.TB, b []byte) junitSuites {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	elems := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("invalid XML: %v\n%s", err, b)
		}
		if se, ok := tok.(xml.StartElement); ok {
			elems++
			switch se.Name.Local {
			case "testsuites", "testsuite", "properties", "property", "testcase", "failure", "skipped", "system-out":
			default:
				t.Errorf("unexpected element <%s>", se.Name.Local)
			}
		}
	}
	var doc junitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	return doc
}

func TestJUnitOneTestcasePerScenario(t *testing.T) {
	rep := naiveReport(t)
	doc := parseJUnit(t, renderJUnit(t, rep))
	if len(doc.Suites) != 1 {
		t.Fatalf("%d suites", len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Name != rep.Name || s.Tests != 1+len(rep.Results) || len(s.Cases) != s.Tests {
		t.Errorf("suite %q with %d tests and %d cases, want %q with %d", s.Name, s.Tests, len(s.Cases), rep.Name, 1+len(rep.Results))
	}
	if s.Cases[0].Name != "baseline" || s.Cases[0].Failure != nil {
		t.Errorf("first case %q (failure %v), want a passing baseline", s.Cases[0].Name, s.Cases[0].Failure)
	}
	failed := map[string]*junitFailure{}
	for _, c := range s.Cases {
		if c.Failure != nil {
			failed[c.Name] = c.Failure
		}
	}
	if len(failed) != 2 || s.Failures != 2 || doc.Failures != 2 {
		t.Fatalf("failures %v (suite %d, total %d), want the 2 unsafe scenarios", failed, s.Failures, doc.Failures)
	}
	f := failed["lost_acknowledgement/refund#1"]
	if f == nil {
		t.Fatal("lost_acknowledgement/refund#1 did not fail")
	}
	if f.Type != runtime.CodeDuplicateWrite || !strings.Contains(f.Message, "(and 1 more)") {
		t.Errorf("failure type %q message %q", f.Type, f.Message)
	}
	for _, want := range []string{"[duplicate_write]", "[invariant_failed]", "calls: 1:refund#1, 1:refund#2", "replay: go test -run"} {
		if !strings.Contains(f.Text, want) {
			t.Errorf("failure text lacks %q:\n%s", want, f.Text)
		}
	}
}

func TestJUnitBaselineFailedAndInconclusive(t *testing.T) {
	base := &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Failed: true, Error: "boom",
		Findings: []runtime.Finding{{Code: runtime.CodeBaselineFailed, Severity: runtime.SeverityError, Message: "the agent failed", Scenario: "baseline"}}}
	rep := &runtime.Report{SchemaVersion: "1", Name: "T", Baseline: base, BaselineFailure: "boom", Findings: base.Findings}
	s := parseJUnit(t, renderJUnit(t, rep)).Suites[0]
	if len(s.Cases) != 1 || s.Cases[0].Failure == nil || s.Cases[0].Failure.Type != runtime.CodeBaselineFailed {
		t.Errorf("baseline case %+v, want a baseline_failed failure", s.Cases)
	}

	res := &runtime.Result{Scenario: "crash_restart/x#1", Kind: "crash_restart", Inconclusive: true,
		Fault: &runtime.Fault{Kind: runtime.FaultCrash, Op: "x", Occurrence: 1}, Trace: &runtime.Trace{FaultNote: "x#1 was never called"},
		Findings: []runtime.Finding{{Code: runtime.CodeFaultNotTriggered, Severity: runtime.SeverityWarning, Message: "never fired"}}}
	rep = &runtime.Report{SchemaVersion: "1", Name: "T", Safe: true, BaselineSucceeded: true, InconclusiveCount: 1,
		Baseline: &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true},
		Results:  []*runtime.Result{res}}
	s = parseJUnit(t, renderJUnit(t, rep)).Suites[0]
	c := s.Cases[1]
	if c.Failure != nil || c.Skipped == nil || !strings.Contains(c.Skipped.Message, "x#1 was never called") || s.Skipped != 1 {
		t.Errorf("inconclusive case %+v (skipped %d), want skipped with the reason", c, s.Skipped)
	}
	if c.SystemOut == nil || !strings.Contains(c.SystemOut.Text, "warning fault_not_triggered: never fired") {
		t.Errorf("system-out %+v lacks the warning", c.SystemOut)
	}
}

func TestJUnitEscapesEverythingFromTraces(t *testing.T) {
	rep := hostileReport()
	out := renderJUnit(t, rep)
	doc := parseJUnit(t, out)
	s := doc.Suites[0]
	if s.Name != rep.Name {
		t.Errorf("suite name %q, want %q", s.Name, rep.Name)
	}
	c := s.Cases[1]
	if c.Name != rep.Results[0].Scenario {
		t.Errorf("case name %q, want %q", c.Name, rep.Results[0].Scenario)
	}
	if c.Failure == nil {
		t.Fatal("hostile scenario did not fail")
	}
	for _, p := range []string{xssScript, xssAttr, xssQuote, xssCDATA} {
		if !strings.Contains(c.Failure.Text+c.Failure.Message, p) {
			t.Errorf("payload %q lost from the failure", p)
		}
	}
	// XML 1.0 cannot carry ESC or BEL: they are replaced, never written raw.
	if bytes.ContainsAny(out, "\x07\x1b") {
		t.Error("control characters written raw into XML")
	}
	if bytes.Contains(out, []byte("<evil")) || bytes.Contains(out, []byte("<script>")) {
		t.Error("markup written raw into XML")
	}
}

func TestJUnitSeveralReports(t *testing.T) {
	naive, keyed := naiveReport(t), keyedReport(t)
	var buf bytes.Buffer
	if err := JUnit(&buf, naive, keyed); err != nil {
		t.Fatal(err)
	}
	doc := parseJUnit(t, buf.Bytes())
	if len(doc.Suites) != 2 || doc.Suites[0].Name != naive.Name || doc.Suites[1].Name != keyed.Name {
		t.Fatalf("suites %+v", doc.Suites)
	}
	if want := 2 + len(naive.Results) + len(keyed.Results); doc.Tests != want || doc.Failures != 2 {
		t.Errorf("totals: %d tests, %d failures; want %d and 2", doc.Tests, doc.Failures, want)
	}
	if err := JUnit(&buf, naive, nil); err == nil {
		t.Error("a nil report was accepted")
	}
}
