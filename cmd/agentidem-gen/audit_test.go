package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The files in testdata/audit are the spans of otel/examples/production:
// *.stdouttrace.jsonl as the SDK's stdouttrace exporter wrote them (the
// call sites shortened), *.otlp.jsonl the same spans in the Collector file
// exporter's OTLP JSON. retrying: the agent retried a timed-out refund
// without a key and the provider booked it twice; keyed: with a key the
// retry was replayed.

func TestAuditFindsTheDuplicateRefund(t *testing.T) {
	for _, format := range []string{"stdouttrace", "otlp"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			jsonOut, junitOut := filepath.Join(dir, "audit.json"), filepath.Join(dir, "junit.xml")
			code, out, errOut := runCLI("audit", "--json", jsonOut, "--junit", junitOut, "testdata/audit/retrying."+format+".jsonl")
			assert.Equal(t, 1, code, "an unsafe audit exits 1")
			assert.Contains(t, errOut, "agentidem-gen: the audit found duplicate effects")
			assert.True(t, strings.HasPrefix(out, "audit: UNSAFE: 4 spans with agentidem attributes (5 spans read, 1 without them), 1 finding\n"), out)
			assert.Contains(t, out, "error duplicate_write: ledger.refund executed successfully 2 times")
			assert.Equal(t, 2, strings.Count(out, "  success ledger.refund trace "), out)

			b, err := os.ReadFile(jsonOut)
			require.NoError(t, err)
			require.NoError(t, reportschema.ValidateJSON(b))
			code, html, _ := runCLI("report", "--html", filepath.Join(dir, "audit.html"), jsonOut)
			assert.Equal(t, 0, code, html)
			page, err := os.ReadFile(filepath.Join(dir, "audit.html"))
			require.NoError(t, err)
			assert.Contains(t, string(page), "duplicate_write")

			x, err := os.ReadFile(junitOut)
			require.NoError(t, err)
			var suites struct {
				Failures int `xml:"failures,attr"`
			}
			require.NoError(t, xml.Unmarshal(x, &suites))
			assert.Equal(t, 1, suites.Failures)
		})
	}
}

func TestAuditOfTheKeyedAgentIsClean(t *testing.T) {
	code, out, errOut := runCLI("audit", "testdata/audit/keyed.stdouttrace.jsonl", "testdata/audit/keyed.otlp.jsonl")
	assert.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasPrefix(out, "audit: CLEAN: 8 spans with agentidem attributes"), out)
	assert.Contains(t, out, "4 spans were read more than once (same trace and span id) and counted once", "the same spans in two exports are one execution each")
}

func TestAuditBadInput(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("testdata/audit/keyed.stdouttrace.jsonl")
	require.NoError(t, err)
	lines := strings.SplitAfter(string(good), "\n")
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(lines[0][:100]+"\n"+strings.Join(lines[1:], "")+"garbage\n"), 0o644))
	code, out, _ := runCLI("audit", bad)
	assert.Equal(t, 0, code, "what could be read is clean; the rest is listed")
	assert.Contains(t, out, bad+":1: truncated JSON object (skipped)")
	assert.Contains(t, out, bad+`:6: not a JSON object: "garbage" (skipped)`)

	other := filepath.Join(dir, "other.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"schema_version":"1"}`), 0o644))
	code, out, errOut := runCLI("audit", other)
	assert.Equal(t, 1, code, "nothing to audit is not clean")
	assert.Contains(t, out, "audit: NOTHING TO AUDIT")
	assert.Contains(t, errOut, "no span carries agentidem.op")

	code, _, errOut = runCLI("audit", filepath.Join(dir, "missing.jsonl"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no such file")

	code, _, errOut = runCLI("audit")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "audit needs at least one FILE")
}
