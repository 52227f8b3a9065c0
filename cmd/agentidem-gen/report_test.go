package main

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// savedReport runs the fault suite on the refund example's naive agent and
// saves the report as testkit does, returning the file's path.
func savedReport(t *testing.T) string {
	t.Helper()
	var bank *refund.Bank
	rep, err := runtime.Run(context.Background(), "TestNaiveAgent", func(ctx context.Context) error {
		_, err := (&refund.NaiveAgent{Bank: bank}).Run(ctx, "p1")
		return err
	},
		runtime.Setup(func(context.Context) error { bank = refund.NewBank(100, "p1"); return nil }),
		runtime.Invariant("one refund", func(*runtime.Trace) error {
			if n := len(bank.Refunds()); n > 1 {
				return fmt.Errorf("refunded %d times", n)
			}
			return nil
		}),
	)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "TestNaiveAgent.json")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, rep.WriteJSON(f))
	require.NoError(t, f.Close())
	return path
}

func TestReportPrintsSummary(t *testing.T) {
	path := savedReport(t)
	code, out, errOut := runCLI("report", path)
	assert.Equal(t, 0, code, "an unsafe report is still rendered: exit 0")
	assert.Empty(t, errOut)
	assert.True(t, strings.HasPrefix(out, "agentidem TestNaiveAgent: UNSAFE — baseline ok, "), out)
	for _, want := range []string{
		"\nscenarios:\n",
		"UNSAFE       lost_acknowledgement/refund#1",
		"\nfindings:\n",
		"error   duplicate_write        lost_acknowledgement/refund#1",
		`identity: "p1"`,
		"replay: AGENTIDEM_SCENARIO='lost_acknowledgement/refund#1'",
	} {
		assert.Contains(t, out, want)
	}
	// Not a terminal: plain text, no colors, no progress redraws.
	assert.NotContains(t, out+errOut, "\x1b[")
	assert.NotContains(t, out+errOut, "\r")

	code, out, _ = runCLI("report", "-q", path)
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
}

func TestReportWritesHTMLAndJUnit(t *testing.T) {
	path := savedReport(t)
	dir := t.TempDir()
	htmlOut, xmlOut := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.xml")
	code, out, errOut := runCLI("report", "--html", htmlOut, "--junit", xmlOut, path)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "UNSAFE")
	assert.Regexp(t, `^agentidem-gen: wrote .*r\.html \([0-9.]+ KB\)\nagentidem-gen: wrote .*r\.xml \([0-9.]+ KB\)\n$`, errOut)

	page, err := os.ReadFile(htmlOut)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(page), "<!DOCTYPE html>"))
	assert.Contains(t, string(page), `data-verdict="UNSAFE"`)
	for _, ext := range []string{"http://", "https://", "src="} {
		assert.NotContains(t, string(page), ext, "the page must not load anything")
	}

	b, err := os.ReadFile(xmlOut)
	require.NoError(t, err)
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	require.NoError(t, xml.Unmarshal(b, &doc))
	rep, err := runtime.ReadReport(path)
	require.NoError(t, err)
	assert.Equal(t, 1+len(rep.Results), doc.Tests)
	assert.Equal(t, 2, doc.Failures)

	// No temporary files are left next to the outputs.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2)
}

func TestReportUsageErrors(t *testing.T) {
	path := savedReport(t)
	for _, args := range [][]string{
		{"report"},
		{"report", "--html", t.TempDir(), path, path}, // two pages with one name
		{"report", "--bogus", path},
		{"report", path, "--html"},
	} {
		code, out, errOut := runCLI(args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Empty(t, out, "%v", args)
		assert.Contains(t, errOut, "Run 'agentidem-gen --help' for usage.", "%v", args)
	}
}

func TestReportSeveralReports(t *testing.T) {
	first := savedReport(t)
	dir := filepath.Dir(first)
	// A second, safe report next to it.
	var bank *refund.Bank
	rep, err := runtime.Run(context.Background(), "TestKeyedAgent", func(ctx context.Context) error {
		_, err := (&refund.KeyedAgent{Bank: bank}).Run(ctx, "p1")
		return err
	}, runtime.Setup(func(context.Context) error { bank = refund.NewBank(100, "p1"); return nil }))
	require.NoError(t, err)
	f, err := os.Create(filepath.Join(dir, "TestKeyedAgent.json"))
	require.NoError(t, err)
	require.NoError(t, rep.WriteJSON(f))
	require.NoError(t, f.Close())

	outDir := t.TempDir()
	pages, junit := filepath.Join(outDir, "pages"), filepath.Join(outDir, "junit.xml")
	code, out, errOut := runCLI("report", "--html", pages, "--junit", junit, dir)
	require.Equal(t, 0, code, errOut)
	// Sorted by file name: the keyed agent first.
	keyed, naive := strings.Index(out, "agentidem TestKeyedAgent: SAFE"), strings.Index(out, "agentidem TestNaiveAgent: UNSAFE")
	assert.True(t, keyed >= 0 && naive > keyed, out)
	assert.True(t, strings.HasSuffix(out, "\nagentidem: 2 reports, 1 not safe: TestNaiveAgent (UNSAFE)\n"), out)
	assert.FileExists(t, filepath.Join(pages, "TestKeyedAgent.html"))
	assert.FileExists(t, filepath.Join(pages, "TestNaiveAgent.html"))

	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	var doc struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &doc))
	require.Len(t, doc.Suites, 2)
	assert.Equal(t, "TestKeyedAgent", doc.Suites[0].Name)
	assert.Equal(t, 0, doc.Suites[0].Failures)
	assert.Equal(t, "TestNaiveAgent", doc.Suites[1].Name)
	assert.Equal(t, 2, doc.Suites[1].Failures)
	assert.Equal(t, 2, doc.Failures)

	// An empty directory is an input error.
	code, _, errOut = runCLI("report", t.TempDir())
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no .json file in")
}

// A directory of reports as AGENTIDEM_REPORT_DIR leaves it after go test
// ./...: each package's reports in the package's directory below it, where
// two packages may name a test alike. Every report is read, and each gets
// its page at its own path; hidden directories (a renderer's temporary
// files) are skipped.
func TestReportDirectoryTree(t *testing.T) {
	saved, err := os.ReadFile(savedReport(t))
	require.NoError(t, err)
	dir := t.TempDir()
	for _, p := range []string{"TestNaiveAgent.json", "billing/TestNaiveAgent.json", "payments/refund/TestNaiveAgent.json", ".cache/TestNaiveAgent.json"} {
		path := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, saved, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "billing", "notes.txt"), []byte("not a report"), 0o644))

	pages := filepath.Join(t.TempDir(), "pages")
	code, out, errOut := runCLI("report", "-q", "--html", pages, dir)
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, out)
	for _, page := range []string{"TestNaiveAgent.html", "billing/TestNaiveAgent.html", "payments/refund/TestNaiveAgent.html"} {
		assert.FileExists(t, filepath.Join(pages, filepath.FromSlash(page)))
	}
	assert.NoDirExists(t, filepath.Join(pages, ".cache"))
	assert.Equal(t, 3, strings.Count(errOut, "agentidem-gen: wrote "), errOut)

	code, out, errOut = runCLI("report", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "agentidem: 3 reports, 3 not safe")
}

func TestReportInvalidInput(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "bad.json")
	write(t, notJSON, "{not json")
	future := filepath.Join(dir, "future.json")
	write(t, future, `{"schema_version": "9", "name": "T"}`)
	cases := map[string]string{
		filepath.Join(dir, "missing.json"): "no such file",
		notJSON:                            "reading report " + notJSON,
		future:                             `schema_version "9" is not one this version reads`,
	}
	for path, want := range cases {
		code, out, errOut := runCLI("report", "--html", filepath.Join(dir, "out.html"), path)
		assert.Equal(t, 1, code, path)
		assert.Empty(t, out, path)
		assert.True(t, strings.HasPrefix(errOut, "agentidem-gen: "), errOut)
		assert.Contains(t, errOut, want, path)
		assert.NoFileExists(t, filepath.Join(dir, "out.html"), "nothing is written for an invalid report")
	}
}

func TestReportUnwritableOutput(t *testing.T) {
	path := savedReport(t)
	out := filepath.Join(t.TempDir(), "no", "such", "dir", "r.html")
	code, stdout, errOut := runCLI("report", "--html", out, path)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Contains(t, errOut, "agentidem-gen: writing "+out)
}

func TestReportHelp(t *testing.T) {
	code, out, _ := runCLI("report", "--help")
	assert.Equal(t, 0, code)
	for _, want := range []string{"--html file", "--junit file", "NO_COLOR", "one self-contained HTML page"} {
		assert.Contains(t, out, want)
	}
}

// TestReportVersion1 renders a report written before the AgentIdem-compatible
// shape (schema_version 1).
func TestReportVersion1(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join("..", "..", "runtime", "testdata", "report-v1.json")
	code, out, errOut := runCLI("report", "--html", filepath.Join(dir, "out.html"), "--junit", filepath.Join(dir, "junit.xml"), v1)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "lost_acknowledgement/refund#1")
	assert.Contains(t, out, "duplicate_write")
	html, err := os.ReadFile(filepath.Join(dir, "out.html"))
	require.NoError(t, err)
	assert.Contains(t, string(html), "1:refund#1")
}
