package generator_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/generator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEndToEnd copies every golden case into one temporary module, generates
// and writes the wrappers there, checks that they equal want.golden, then
// vets, builds and runs each case's trace_test.go: the agent code calls the
// generated wrappers under runtime.RunTraced and asserts the recorded trace
// (ops, args, identity, entity, redaction, results, errors).
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	copyCase(t, dir, "tracecheck")
	for _, c := range goldenCases {
		copyCase(t, dir, c)
	}
	out, err := generator.Generate(generator.Config{Dir: dir}, "./...")
	require.NoError(t, err)
	require.NoError(t, out.Write())
	for _, c := range goldenCases {
		got, err := os.ReadFile(filepath.Join(dir, c, generator.FileName))
		require.NoError(t, err, "case %s", c)
		want, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", c, "want.golden"))
		require.NoError(t, err)
		// The op descriptors name their package's import path, which
		// the module the case is copied to changes as copyCase does.
		wantHere := strings.ReplaceAll(string(want), "\"github.com/agentidem/agentidem-go/testdata/", "\""+e2eModule+"/")
		if d := firstDiff(wantHere, string(got)); d != "" {
			t.Errorf("case %s: output in another module differs from want.golden: %s", c, d)
		}
	}
	if msg, err := goTool(t, dir, "vet", "./..."); err != nil {
		t.Fatalf("go vet of the generated code failed: %v\n%s", err, msg)
	}
	msg, err := goTool(t, dir, "test", "-count=1", "-v", "./...")
	t.Log(msg)
	require.NoError(t, err, "the generated wrappers do not run as traced")
	for _, c := range goldenCases {
		assert.Contains(t, msg, "ok  \t"+e2eModule+"/"+c, "case %s did not pass", c)
	}
}
