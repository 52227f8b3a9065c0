package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenTrace is a golden trace as testkit.Golden writes it (testkit's
// TestAGoldenTraceIsKnownForNoReport keeps the two in step).
const goldenTrace = `{
  "test": "TestRefund",
  "ordered": true,
  "invocations": [
    [
      {"op":"getPayment","kind":"read"},
      {"op":"refund","kind":"write","identity":"\"payment-123\""}
    ]
  ]
}
`

// TestReportSaysAFileIsNotAReport: on a file that is not a report, report
// printed Go's decoding errors ("json: cannot unmarshal array into Go value
// of type struct { SchemaVersion string ...", "Go struct field
// .plain.results of type []*runtime.Result"), or, for {} and a golden
// trace, told to render it with the agentidem-gen of the agentidem-go that
// wrote it. It says that the file is not an agentidem report, or that it
// is a golden trace, with its path.
func TestReportSaysAFileIsNotAReport(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ body, want string }{
		"array.json":        {`[]`, "not an agentidem report: it holds an array, where a report is an object; "},
		"string.json":       {`"str"`, "not an agentidem report: it holds a string, where a report is an object; "},
		"empty.json":        {`{}`, "not an agentidem report: it has no schema_version; "},
		"number.json":       {`{"schema_version":2}`, `not an agentidem report: its schema_version is a number (2), where a report's is a string such as "2"; `},
		"results.json":      {`{"schema_version":"2","results":"x"}`, "not an agentidem report: at results: a JSON string, where a report has an array; "},
		"refund.trace.json": {goldenTrace, "a golden trace that testkit.Golden keeps, not a report; the reports are the files testkit writes below $AGENTIDEM_REPORT_DIR\n"},
	} {
		path := filepath.Join(dir, name)
		write(t, path, c.body)
		code, out, errOut := runCLI("report", path)
		assert.Equal(t, 1, code, name)
		assert.Empty(t, out, name)
		assert.True(t, strings.HasPrefix(errOut, "agentidem-gen: reading report "+path+": "+c.want), "%s: %s", name, errOut)
		for _, internal := range []string{"Go value", "Go struct", "of type", "render it with the agentidem-gen"} {
			assert.NotContains(t, errOut, internal, name)
		}
	}
}

// TestReportDirectorySkipsWhatIsNotAReport: one file in reports/ that is
// not a report stopped every report in it from being rendered. In a
// directory, a file that does not claim to be a report (a golden trace, as
// under a package's testdata/ when reports go to the module's root, or
// another tool's JSON) is skipped with a note, and the reports are
// rendered; a damaged report still fails, and so does a directory with no
// report at all.
func TestReportDirectorySkipsWhatIsNotAReport(t *testing.T) {
	saved, err := os.ReadFile(savedReport(t))
	require.NoError(t, err)
	reports := t.TempDir()
	write(t, filepath.Join(reports, "agent", "TestNaiveAgent.json"), string(saved))
	golden := filepath.Join(reports, "agent", "testdata", "refund.trace.json")
	write(t, golden, goldenTrace)
	other := filepath.Join(reports, "coverage.json")
	write(t, other, `{"files":[]}`)

	out := t.TempDir()
	pages, junit := filepath.Join(out, "pages"), filepath.Join(out, "junit.xml")
	code, stdout, errOut := runCLI("report", "--html", pages, "--junit", junit, reports)
	require.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasPrefix(stdout, "agentidem TestNaiveAgent: UNSAFE"), stdout)
	assert.NotContains(t, stdout, "2 reports")
	assert.Equal(t, "agentidem-gen: skipped "+golden+": a golden trace that testkit.Golden keeps, not a report\n"+
		"agentidem-gen: skipped "+other+": not an agentidem report: it has no schema_version\n"+
		"agentidem-gen: wrote "+filepath.Join(pages, "agent", "TestNaiveAgent.html"), strings.SplitN(errOut, " (", 2)[0])
	assert.FileExists(t, filepath.Join(pages, "agent", "TestNaiveAgent.html"))
	assert.NoDirExists(t, filepath.Join(pages, "agent", "testdata"))
	assert.FileExists(t, junit)

	// A file named by itself was meant to be rendered: it fails.
	code, _, errOut = runCLI("report", golden)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "a golden trace that testkit.Golden keeps, not a report")

	// A report that something damaged fails the directory.
	damaged := filepath.Join(reports, "agent", "TestBroken.json")
	write(t, damaged, `{"schema_version":"2","results":"x"}`)
	code, stdout, errOut = runCLI("report", reports)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "agentidem-gen: reading report "+damaged+": not an agentidem report: at results: a JSON string, where a report has an array; a report is the JSON file that testkit.TestAgent or runtime.Run writes (AGENTIDEM_REPORT_DIR)\n", errOut)

	// A directory of golden traces has nothing to render.
	code, _, errOut = runCLI("report", filepath.Dir(golden))
	assert.Equal(t, 1, code)
	assert.Equal(t, "agentidem-gen: reading reports: no report in "+filepath.Dir(golden)+", only other JSON ("+golden+": a golden trace that testkit.Golden keeps, not a report); give the directory testkit writes reports to (AGENTIDEM_REPORT_DIR)\n", errOut)
}
