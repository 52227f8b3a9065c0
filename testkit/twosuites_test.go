package testkit_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTwoSuitesInOneTest is run by TestTwoSuitesReplayAndReports in a child
// process: a table of two buggy agents without t.Run, each a TestAgent call
// in the same test. The second one posts under another key, so the two
// suites' findings can be told apart.
func TestTwoSuitesInOneTest(t *testing.T) {
	if os.Getenv("AGENTIDEM_TWO_SUITES_CHILD") != "1" {
		t.Skip("run by TestTwoSuitesReplayAndReports")
	}
	for _, key := range []string{"first-key", "second-key"} {
		var l *tools.Ledger
		testkit.TestAgent(t, func(ctx context.Context) error {
			var err error
			for i := 0; i < 3; i++ {
				if err = l.PostTraced(ctx, key, "hello"); err == nil {
					return nil
				}
			}
			return err
		}, testkit.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil }))
	}
}

var replayRE = regexp.MustCompile(`replay: go test -run '([^']+)'`)

// TestTwoSuitesReplayAndReports: with two TestAgent calls in one test, go
// test names the second suite's subtests lost_acknowledgement#01, ...; the
// replay line of each finding reruns exactly the scenario that failed (in
// the suite that failed), and each suite writes a report file of its own
// (issue 12.10).
func TestTwoSuitesReplayAndReports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary twice")
	}
	// With -v every scenario has its subtest from the start; without it,
	// only the failing ones get theirs, after the run (subtests.go): the
	// names, and so the replay lines, are the same.
	for _, verbose := range []bool{true, false} {
		t.Run(fmt.Sprintf("verbose=%v", verbose), func(t *testing.T) { twoSuites(t, verbose) })
	}
}

func twoSuites(t *testing.T, verbose bool) {
	dir := t.TempDir()
	run := func(pattern string, verbose bool) string {
		args := []string{"-test.run=" + pattern, "-test.count=1"}
		if verbose {
			args = append(args, "-test.v")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "AGENTIDEM_TWO_SUITES_CHILD=1", "AGENTIDEM_REPORT_DIR="+dir)
		out, _ := cmd.CombinedOutput() // the buggy agents fail
		return string(out)
	}
	out := run("^TestTwoSuitesInOneTest$", verbose)

	// Two reports, one per suite, neither overwritten, in the package's
	// directory below dir.
	pkgDir := filepath.Join(dir, "testkit")
	entries, err := os.ReadDir(pkgDir)
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	sort.Strings(files)
	require.Equal(t, []string{"TestTwoSuitesInOneTest.json", "TestTwoSuitesInOneTest_02.json"}, files)
	first, err := os.ReadFile(filepath.Join(pkgDir, files[0]))
	require.NoError(t, err)
	secondReport, err := os.ReadFile(filepath.Join(pkgDir, files[1]))
	require.NoError(t, err)
	assert.Contains(t, string(first), "first-key")
	assert.NotContains(t, string(first), "second-key")
	assert.Contains(t, string(secondReport), "second-key")

	// Each finding's replay line names its own suite's subtest.
	var second string
	for _, line := range strings.Split(out, "\n") {
		m := replayRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if strings.Contains(line, "second-key") || strings.Contains(m[1], "#01") {
			if strings.Contains(m[1], "/^lost_acknowledgement#01$/") {
				second = m[1]
			}
		}
	}
	require.NotEmpty(t, second, "no replay line of the second suite names lost_acknowledgement#01:\n%s", out)

	// Rerunning it runs that scenario of the second suite, and no scenario
	// of the first.
	rerun := run(second, true)
	var ran []string
	for _, line := range strings.Split(rerun, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "=== RUN   "); ok && strings.Count(name, "/") == 2 {
			ran = append(ran, name)
		}
	}
	assert.Equal(t, []string{"TestTwoSuitesInOneTest/lost_acknowledgement#01/post#1"}, ran, "the replay line %q ran:\n%s", second, rerun)
	assert.Contains(t, rerun, `identity "second-key"`)
	assert.NotContains(t, rerun, `identity "first-key"`, "the replay reran the first suite's scenario")

}

// TestSameTestNameInTwoPackages: `AGENTIDEM_REPORT_DIR=reports go test
// ./...` runs each package's test binary in its own directory, at once.
// Two packages that name a test alike each keep their report, below
// reports/ in the package's directory; before, both wrote
// reports/<Test>.json, and one report was lost (or, written at the same
// time in place, the file held parts of both).
func TestSameTestNameInTwoPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary twice")
	}
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644))
	pkgs := []string{"billing", filepath.Join("payments", "refund")}
	errs := make(chan error, len(pkgs))
	for _, p := range pkgs {
		require.NoError(t, os.MkdirAll(filepath.Join(root, p), 0o755))
		cmd := exec.Command(os.Args[0], "-test.run=^TestTwoSuitesInOneTest$", "-test.count=1")
		cmd.Dir = filepath.Join(root, p) // as go test runs each package
		cmd.Env = append(os.Environ(), "AGENTIDEM_TWO_SUITES_CHILD=1", "AGENTIDEM_REPORT_DIR=reports")
		go func() {
			out, err := cmd.CombinedOutput()
			if err != nil && !strings.Contains(string(out), "--- FAIL: TestTwoSuitesInOneTest") {
				err = fmt.Errorf("%v\n%s", err, out) // not the buggy agents' failure
			} else {
				err = nil
			}
			errs <- err
		}()
	}
	for range pkgs {
		require.NoError(t, <-errs)
	}
	for _, p := range pkgs {
		for _, name := range []string{"TestTwoSuitesInOneTest.json", "TestTwoSuitesInOneTest_02.json"} {
			path := filepath.Join(root, "reports", p, name)
			rep, err := runtime.ReadReport(path)
			if assert.NoError(t, err, "%s's report", p) {
				assert.Equal(t, "TestTwoSuitesInOneTest", rep.Name, path)
			}
		}
	}
	_, err := os.Stat(filepath.Join(root, "reports", "TestTwoSuitesInOneTest.json"))
	assert.True(t, os.IsNotExist(err), "a report at the top of reports/, shared by both packages")
}
