package runtime_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// TestReadReportSaysAFileIsNotAReport: files that are not reports were
// refused with Go's decoding errors ("json: cannot unmarshal array into Go
// value of type struct { SchemaVersion string ...", "Go struct field
// .plain.results of type []*runtime.Result") or, with no schema_version,
// with the advice to render them with the agentidem-gen that wrote them.
// Each error names the file and says that it is not a report, or that it
// is a golden trace, in JSON's terms.
func TestReadReportSaysAFileIsNotAReport(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		`[]`:                                     "not an agentidem report: it holds an array, where a report is an object",
		`"str"`:                                  "not an agentidem report: it holds a string, where a report is an object",
		`{}`:                                     "not an agentidem report: it has no schema_version",
		`{"schema_version":2}`:                   `not an agentidem report: its schema_version is a number (2), where a report's is a string such as "2"`,
		`{"schema_version":"2","results":"x"}`:   "not an agentidem report: at results: a JSON string, where a report has an array",
		`{"schema_version":"2","results":["x"]}`: "not an agentidem report: at results: a JSON string, where a report has an object",
		`{"schema_version":"2","results":[{"trace":{"operations":[{"kind":3}]}}]}`: "not an agentidem report: at results.trace.operations.kind: a JSON number, where a report has a string",
		`{"schema_version":"1","name":null,"baseline":5}`:                          "not an agentidem report: baseline: a JSON number, where a report has an object",
		`{"schema_version":"2","started_at":5}`:                                    "not an agentidem report: a time is not a JSON string",
		"{\n  \"test\": \"TestRefund\",\n  \"ordered\": true,\n  \"invocations\": [\n    [\n      {\"op\":\"refund\",\"kind\":\"write\",\"identity\":\"\\\"p1\\\"\"}\n    ]\n  ]\n}\n": "a golden trace that testkit.Golden keeps, not a report; the reports are the files testkit writes below $AGENTIDEM_REPORT_DIR",
	} {
		path := filepath.Join(dir, "r.json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := runtime.ReadReport(path)
		if err == nil {
			t.Errorf("%s was read as a report", body)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "reading report "+path+": "+want) {
			t.Errorf("%s:\n got %s\nwant reading report %s: %s", body, msg, path, want)
		}
		for _, internal := range []string{"Go value", "Go struct", "of type", "struct {", "plain", "render it with the agentidem-gen"} {
			if strings.Contains(msg, internal) {
				t.Errorf("%s: %q speaks of %q", body, msg, internal)
			}
		}
	}
}
