package generator_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/generator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites testdata/<case>/want.golden from the generator's output:
// run `go test ./generator -update` after a deliberate change to the
// generated code, then review the diff.
var update = flag.Bool("update", false, "rewrite the testdata/<case>/want.golden files (go test ./generator -update)")

// goldenCases are the directories under the repository's testdata/ whose
// package is generated and compared with want.golden.
var goldenCases = []string{"generic", "hostile", "imports", "methods", "options", "params", "plain"}

// repoRoot is the module root, where the golden cases are loaded in place.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	return root
}

// generateGolden loads every golden case in one go/packages call and returns
// the output keyed by case name.
func generateGolden(t testing.TB) (map[string][]byte, []string) {
	t.Helper()
	root := repoRoot(t)
	var patterns []string
	for _, c := range goldenCases {
		patterns = append(patterns, "./testdata/"+c)
	}
	out, err := generator.Generate(generator.Config{Dir: root}, patterns...)
	require.NoError(t, err)
	got := map[string][]byte{}
	for _, f := range out.Files {
		require.False(t, f.Remove, "%s: unexpected removal", f.Path)
		rel, err := filepath.Rel(filepath.Join(root, "testdata"), filepath.Dir(f.Path))
		require.NoError(t, err)
		assert.Equal(t, generator.FileName, filepath.Base(f.Path))
		got[rel] = f.Data
	}
	return got, out.Warnings
}

func TestGolden(t *testing.T) {
	got, warnings := generateGolden(t)
	root := repoRoot(t)
	for _, c := range goldenCases {
		t.Run(c, func(t *testing.T) {
			data, ok := got[c]
			require.True(t, ok, "no output for testdata/%s", c)
			path := filepath.Join(root, "testdata", c, "want.golden")
			if *update {
				require.NoError(t, os.WriteFile(path, data, 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./generator -update to create it")
			if d := firstDiff(string(want), string(data)); d != "" {
				t.Errorf("testdata/%s/want.golden differs from the output (%s): review the change, then go test ./generator -update", c, d)
			}
		})
	}
	// The one write without an error result gets a positioned warning; the
	// writes without a context get one each, naming the scenarios that
	// weakens (bump among them); no read warns.
	var noError, noCtx []string
	for _, w := range warnings {
		switch {
		case strings.Contains(w, "has no error result"):
			noError = append(noError, w)
		case strings.Contains(w, "has no context.Context parameter"):
			noCtx = append(noCtx, w)
		}
	}
	assert.Len(t, noError, 1, "%v", warnings)
	assert.Regexp(t, `^.*testdata/plain/tools\.go:39:1: warning: write bump has no error result: `, noError[0])
	assert.Len(t, noCtx, len(warnings)-1, "%v", warnings)
	assert.Contains(t, strings.Join(noCtx, "\n"), "testdata/plain/tools.go:39:1: warning: write bump has no context.Context parameter: its calls are attributed to a delivery by the goroutine that makes them, which weakens crash_restart")
	for _, w := range noCtx {
		assert.Regexp(t, `: warning: write \S+ has no context.Context parameter: .*crash_restart.*duplicate_delivery/concurrent.*t\.Parallel`, w)
	}
}

var headerRE = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

func TestGoldenDeterministicAndHeader(t *testing.T) {
	first, _ := generateGolden(t)
	second, _ := generateGolden(t)
	require.Equal(t, len(first), len(second))
	for c, data := range first {
		assert.Equal(t, string(data), string(second[c]), "testdata/%s: output differs between two runs", c)
		line, _, _ := strings.Cut(string(data), "\n")
		assert.Regexp(t, headerRE, line, "testdata/%s: first line", c)
		assert.NotContains(t, string(data), repoRoot(t), "testdata/%s: output mentions a machine path", c)
	}
}

// firstDiff describes the first line where got differs from want, or
// returns "" when they are equal.
func firstDiff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d: want %q, got %q", i+1, wl, gl)
		}
	}
	return "they differ"
}
