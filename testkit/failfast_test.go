package testkit_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFailFastChild runs the suite of the agent that retries a post
// without a key (a duplicate_write) twice in one test: under -failfast
// the first suite's failing scenario is the failure after which go test
// runs no more subtests. Run by TestSuiteUnderFailFastAfterAFailure in a
// child process.
func TestFailFastChild(t *testing.T) {
	if os.Getenv("AGENTIDEM_FAILFAST_CHILD") != "1" {
		t.Skip("run by TestSuiteUnderFailFastAfterAFailure")
	}
	var l *tools.Ledger
	for range 2 {
		testkit.TestAgent(t, retrier(&l), ledgerSetup(&l), testkit.ReportDir(os.Getenv("AGENTIDEM_FAILFAST_DIR")))
	}
}

// Under go test -failfast, once a test has failed, testing's t.Run
// returns without running the subtest: the scenarios of a suite that
// came after, each run in its subtest, did not run, and the suite read
// "SAFE — baseline ok, no other scenario", its report file safe with no
// scenario (red team, /tmp/rt31 ff, ff2). Now the test fails saying which
// scenarios did not run, and the report counts them inconclusive.
func TestSuiteUnderFailFastAfterAFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	for _, args := range [][]string{nil, {"-test.v"}} {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestFailFastChild$", "-test.count=1", "-test.failfast"}, args...)...)
		cmd.Env = append(os.Environ(), "AGENTIDEM_FAILFAST_CHILD=1", "AGENTIDEM_FAILFAST_DIR="+dir)
		b, _ := cmd.CombinedOutput()
		out := string(b)
		assert.Contains(t, out, "--- FAIL: TestFailFastChild", "%v:\n%s", args, out)
		assert.Contains(t, out, "go test ran no subtest for 6 of the suite's scenarios", "%v:\n%s", args, out)
		assert.NotContains(t, out, ": SAFE", "%v:\n%s", args, out)
		// The second suite's report (names.go names its file apart).
		files, _ := filepath.Glob(filepath.Join(dir, "testkit", "TestFailFastChild_*.json"))
		require.Len(t, files, 1, "%v: the second suite's report file", args)
		raw, err := os.ReadFile(files[0])
		require.NoError(t, err, "%v: the report file", args)
		var rep struct {
			FaultCount        int `json:"fault_count"`
			InconclusiveCount int `json:"inconclusive_count"`
		}
		require.NoError(t, json.Unmarshal(raw, &rep))
		assert.Equal(t, 6, rep.FaultCount, "%v", args)
		assert.Equal(t, 6, rep.InconclusiveCount, "%v", args)
		assert.True(t, strings.Contains(string(raw), "not run: go test ran no subtest for it"), "%v: no scenario says why it did not run", args)
	}
}
