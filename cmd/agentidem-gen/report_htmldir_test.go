package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportHTMLDirectoryHoldsOneReportsPage runs the README's
// `agentidem-gen report --html pages/ --junit junit.xml reports/` on a
// reports/ that holds one report and no pages/ yet, which failed with
// "writing pages/: open pages/.pages.…: no such file or directory": a
// trailing slash, or a directory of reports, makes --html a directory,
// made as needed, with the page where it would be among several reports.
// One report given as a file still writes --html page.html as that file.
func TestReportHTMLDirectoryHoldsOneReportsPage(t *testing.T) {
	saved, err := os.ReadFile(savedReport(t))
	require.NoError(t, err)
	reports := filepath.Join(t.TempDir(), "reports")
	report := filepath.Join(reports, "agent", "TestNaiveAgent.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(report), 0o755))
	require.NoError(t, os.WriteFile(report, saved, 0o644))

	for _, c := range []struct {
		name, html, input, page string
	}{
		{"the README's command", "pages/", reports + "/", "pages/agent/TestNaiveAgent.html"},
		{"a directory of reports without a slash", "pages", reports, "pages/agent/TestNaiveAgent.html"},
		{"a report file and a slash", "pages/", report, "pages/TestNaiveAgent.html"},
		{"a report file and a file name", "page.html", report, "page.html"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			html := filepath.Join(out, filepath.FromSlash(c.html))
			if strings.HasSuffix(c.html, "/") {
				html += string(filepath.Separator)
			}
			junit := filepath.Join(out, "junit.xml")
			code, stdout, errOut := runCLI("report", "--html", html, "--junit", junit, c.input)
			require.Equal(t, 0, code, errOut)
			assert.True(t, strings.HasPrefix(stdout, "agentidem TestNaiveAgent: UNSAFE"), stdout)
			page := filepath.Join(out, filepath.FromSlash(c.page))
			assert.Contains(t, errOut, "agentidem-gen: wrote "+page+" (")
			b, err := os.ReadFile(page)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(b), "<!DOCTYPE html>"))
			assert.FileExists(t, junit)
		})
	}
}
