package generator_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// e2eModule is the module path of the temporary modules the end-to-end tests
// generate into.
const e2eModule = "example.com/e2e"

// tempModule creates a module example.com/e2e in a temporary directory. It
// requires this repository through a replace directive pointing at the
// working tree, and starts from the repository's go.sum, so that building it
// needs no network.
func tempModule(t testing.TB) string {
	t.Helper()
	root := repoRoot(t)
	dir := t.TempDir()
	gomod := "module " + e2eModule + "\n\ngo 1.26.0\n\n" +
		"require github.com/agentidem/agentidem-go v0.0.0\n\n" +
		"replace github.com/agentidem/agentidem-go => " + root + "\n"
	writeFile(t, filepath.Join(dir, "go.mod"), gomod)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	writeFile(t, filepath.Join(dir, "go.sum"), string(sum))
	return dir
}

// copyCase copies the Go files of testdata/<name> into dir/<name>, turning
// imports of other testdata packages into imports of the temporary module.
func copyCase(t testing.TB, dir, name string) {
	t.Helper()
	src := filepath.Join(repoRoot(t), "testdata", name)
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		text := strings.ReplaceAll(string(data), "github.com/agentidem/agentidem-go/testdata/", e2eModule+"/")
		writeFile(t, filepath.Join(dir, name, e.Name()), text)
	}
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

// goTool runs the go command in dir, offline, and returns its combined
// output.
func goTool(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(goroot(), "bin", "go"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func goroot() string {
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return "/usr/local/go"
}
