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
		// Without the slash, the same directory: before, a file named
		// pages (red team rtO, item 11).
		{"a report file and no slash", "pages", report, "pages/TestNaiveAgent.html"},
		{"a report file and a file name", "page.html", report, "page.html"},
		{"a report file and a file name in capitals", "PAGE.HTML", report, "PAGE.HTML"},
		{"a name ending in .html/ is a directory", "pages.html/", report, "pages.html/TestNaiveAgent.html"},
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

// Where --html cannot be what its name says (a page's file ending in
// .html, a directory otherwise), report writes nothing and says what to
// give: a page's file for a directory of reports, even one that holds one
// report today, or for several; a .html name that is a directory already;
// a name without .html that is a file already (the file an earlier version
// wrote for --html pages).
func TestReportHTMLNameThatCannotBeWhatItSaysIsAUsageError(t *testing.T) {
	saved, err := os.ReadFile(savedReport(t))
	require.NoError(t, err)
	reports := filepath.Join(t.TempDir(), "reports")
	report := filepath.Join(reports, "agent", "TestNaiveAgent.json")
	other := filepath.Join(reports, "agent", "TestOther.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(report), 0o755))
	require.NoError(t, os.WriteFile(report, saved, 0o644))
	out := t.TempDir()
	dirHTML := filepath.Join(out, "dir.html")
	require.NoError(t, os.Mkdir(dirHTML, 0o755))
	file := filepath.Join(out, "pages")
	require.NoError(t, os.WriteFile(file, []byte("<!DOCTYPE html>"), 0o644))

	for _, c := range []struct {
		name  string
		args  []string
		error string
	}{
		{"a .html name for a directory of one report", []string{filepath.Join(out, "r.html"), reports},
			"--html " + filepath.Join(out, "r.html") + " names one page's file (it ends in .html), and " + reports + " is a directory of reports: give a directory for their pages (--html pages/)"},
		{"a .html name for two reports", []string{filepath.Join(out, "r.html"), report, other},
			"--html " + filepath.Join(out, "r.html") + " names one page's file (it ends in .html), and there are 2 reports: give a directory for their pages (--html pages/)"},
		{"a .html name that is a directory", []string{dirHTML, report},
			"--html " + dirHTML + " is a directory, and a name ending in .html names one page's file: give " + dirHTML + string(filepath.Separator) + " to write the pages in it"},
		{"a name without .html that is a file", []string{file, report},
			"--html " + file + " is a file, and a name that does not end in .html names a directory of pages: give a name ending in .html for one report's page, or a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.args) == 3 {
				require.NoError(t, os.WriteFile(other, saved, 0o644))
				defer os.Remove(other)
			}
			code, stdout, errOut := runCLI(append([]string{"report", "--html"}, c.args...)...)
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, stdout)
			assert.Contains(t, errOut, "agentidem-gen: "+c.error)
			assert.NoFileExists(t, filepath.Join(out, "r.html"))
			assert.NoDirExists(t, filepath.Join(out, "r.html"))
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, "<!DOCTYPE html>", string(b), "the file is left as it was")
		})
	}
}
