package analyzer_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVetTool builds cmd/agentidem-vet and runs it through
// go vet -vettool on testdata/vetmod, a module of its own whose ops are
// declared in one package and dispatched in another.
func TestVetTool(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: builds agentidem-vet and runs go vet on a testdata module")
	}
	bin := filepath.Join(t.TempDir(), "agentidem-vet")
	build := exec.Command("go", "build", "-o", bin, "github.com/agentidem/agentidem-go/cmd/agentidem-vet")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	mod := t.TempDir()
	require.NoError(t, os.CopyFS(mod, os.DirFS(filepath.Join("testdata", "vetmod"))))

	run := func(args ...string) (string, int) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		}
		require.NoError(t, err, "%s: %s", strings.Join(args, " "), out)
		return string(out), 0
	}

	res, code := run("go", "vet", "-vettool="+bin, "./...")
	assert.Equal(t, 1, code, "go vet exit status; output:\n%s", res)
	assert.Contains(t, res, "agent/agent.go:14:17: ShipOrder is declared after=CreateOrder but both start in one concurrent batch")
	assert.Contains(t, res, "tools/tools.go:24:12: INSERT INTO customers runs when the SELECT from customers (line 22) found no row for the same key")
	// Through two interfaces whose implementations the caller's package
	// does not see in export data (an unexported table type): resolved
	// through the facts its package records.
	assert.Contains(t, res, "store/internal/internal.go:19:12: INSERT INTO room_aliases runs when the SELECT from room_aliases (line 12) found no row")
	assert.NotContains(t, res, "internal.go:33")
	assert.NotContains(t, res, "clean.go")
	assert.NotContains(t, res, "agentidem_gen.go")

	// Standalone, the same binary is a multichecker: exit status 0 when
	// clean, 3 on findings. (A second go vet run in one cache is not used:
	// the go command caches a package vetted as a dependency, facts only,
	// and replays that silent result when the package is vetted itself.)
	res, code = run(bin, "./clean")
	assert.Equal(t, 0, code, "standalone on a clean package; output:\n%s", res)
	assert.Empty(t, strings.TrimSpace(res))

	res, code = run(bin, "./agent")
	assert.Equal(t, 3, code, "standalone exit status; output:\n%s", res)
	assert.Contains(t, res, "ShipOrder is declared after=CreateOrder")
}
