package runtime_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// FuzzReportJSON decodes arbitrary JSON as a report: it never panics, and a
// report it decodes writes JSON that reads back and writes the same again.
// The seeds are whole reports, so fuzz with -fuzzminimizetime 0s (minimizing
// a 30 KB input takes minutes):
//
//	go test ./runtime -run '^$' -fuzz FuzzReportJSON -fuzzminimizetime 0s
func FuzzReportJSON(f *testing.F) {
	for _, name := range []string{"report-v1.json", "compat/agentidem-python-report-naive.json", "compat/agentidem-python-report-keyed.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"schema_version":"2","baseline_failure":{"error_type":"panic","message":"boom"},"results":[{"scenario":"x","operation_index":null,"phase":"before","invariants":[{"name":"n","ok":false,"error":"e"}],"duplicates":[{"operation_name":"w","calls":["1:w#1"],"args":{"a":1}}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r runtime.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return
		}
		first, err := json.Marshal(&r)
		if err != nil {
			t.Fatalf("a decoded report does not encode: %v", err)
		}
		var again runtime.Report
		if err := json.Unmarshal(first, &again); err != nil {
			t.Fatalf("a written report does not read back: %v\n%s", err, first)
		}
		second, err := json.Marshal(&again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("a report read back writes differently:\n%s\n%s", first, second)
		}
	})
}
