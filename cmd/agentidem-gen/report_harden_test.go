package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportRefusesToWriteOverItsInput: --html X.json X.json (or --junit)
// would replace the report with its own rendering; it is a usage error and
// the report is left as it was (issue 12.11).
func TestReportRefusesToWriteOverItsInput(t *testing.T) {
	path := savedReport(t)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, args := range [][]string{
		{"report", "--html", path, path},
		{"report", "--junit", path, path},
		{"report", "--html", filepath.Dir(path), path}, // a directory: the page is <name>.html, not the input
	} {
		code, _, errOut := runCLI(args...)
		if args[2] == filepath.Dir(path) {
			assert.Equal(t, 0, code, errOut)
			continue
		}
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
		if args[1] == "--html" {
			// A name that does not end in .html names a directory of
			// pages, and X.json is a file.
			assert.Contains(t, errOut, "--html "+path+" is a file, and a name that does not end in .html names a directory of pages")
		} else {
			assert.Contains(t, errOut, args[1]+" "+path+" would write over the report "+path+", which it reads: refusing; give "+args[1]+" another file name")
		}
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(before), string(after), "%v changed the input", args)
	}
}

// TestReportRefusesAPartialReport: {"schema_version":"1"} was rendered as a
// failed baseline; it is refused, naming what it lacks (issue 12.11).
func TestReportRefusesAPartialReport(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"v1.json": `{"schema_version":"1"}`,
		"v2.json": `{"schema_version":"2","name":"T"}`,
	} {
		path := filepath.Join(dir, name)
		write(t, path, body)
		code, out, errOut := runCLI("report", "--html", filepath.Join(dir, "out.html"), path)
		assert.Equal(t, 1, code, errOut)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "agentidem-gen: reading report "+path+": not a whole report: report does not match ")
		assert.Contains(t, errOut, "missing properties")
		assert.Contains(t, errOut, "'results'")
		assert.Contains(t, errOut, "'safe'")
		assert.NotContains(t, errOut, "BASELINE FAILED")
		assert.NoFileExists(t, filepath.Join(dir, "out.html"))
	}
}
