package testkit_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// update is the usual golden-file flag of a Go test package, defined here
// as a user's package defines it. testkit must define no global flag of its
// own: when it defined -update at init, this line panicked at start-up
// ("flag redefined: update") and no test of the package ran (red team rtV
// #18).
var update = flag.Bool("update", false, "rewrite golden files")

// TestGoldenReadsThePackagesOwnUpdateFlag: the -update a test package
// defines records Golden's traces as AGENTIDEM_UPDATE=1 does, and the
// failure of a changed trace names -update, the flag this binary has.
func TestGoldenReadsThePackagesOwnUpdateFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flag.trace.json")
	twice := func(l **tools.Ledger) func(context.Context) error { return reader(l, 2) }
	once := func(l **tools.Ledger) func(context.Context) error { return reader(l, 1) }
	t.Setenv("AGENTIDEM_UPDATE", "")

	require.NoError(t, flag.Set("update", "true"))
	t.Cleanup(func() { *update = false })
	ft, errs, logs := goldenRun(t, path, twice)
	require.False(t, ft.failed(), "%v", ft.errors)
	require.Empty(t, errs)
	assert.Contains(t, strings.Join(logs, "\n"), "recorded the golden trace")
	require.FileExists(t, path)

	*update = false
	_, errs, _ = goldenRun(t, path, once)
	require.Len(t, errs, 1, "with -update off the trace is compared, not recorded")
	assert.Contains(t, errs[0], "record it again with\n    go test github.com/agentidem/agentidem-go/testkit -run '^TestGolden$' -update")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(b), `"count"`), "the recorded trace was not rewritten")
}
