package testkit_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
	"github.com/stretchr/testify/assert"
)

// TestSubtestsChild is run by TestPassingScenariosWithoutSubtests and
// TestSummaryWhenTestFails in a child process. It runs the suite of an
// agent that passes, then makes a subtest named baseline itself: go test
// names it baseline when the suite made no subtest of that name, and
// baseline#01 when it did. With AGENTIDEM_SUBTESTS_FAIL_AFTER=1 it then
// fails, as an assertion after the suite would.
func TestSubtestsChild(t *testing.T) {
	if os.Getenv("AGENTIDEM_SUBTESTS_CHILD") != "1" {
		t.Skip("run by TestPassingScenariosWithoutSubtests")
	}
	var l *tools.Ledger
	testkit.TestAgent(t, func(ctx context.Context) error {
		return l.PutTraced(ctx, "k", "v") // an upsert: every scenario passes
	}, testkit.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil }),
		testkit.State(func() any { return l.Snapshot() }))
	t.Run("baseline", func(st *testing.T) { fmt.Printf("mine is %s\n", st.Name()) })
	if os.Getenv("AGENTIDEM_SUBTESTS_FAIL_AFTER") == "1" {
		t.Errorf("an assertion after the suite failed")
	}
}

func runSubtestsChild(t *testing.T, env string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestSubtestsChild$", "-test.count=1"}, args...)...)
	cmd.Env = append(os.Environ(), "AGENTIDEM_SUBTESTS_CHILD=1", env)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestPassingScenariosWithoutSubtests: under plain go test a passing
// scenario runs without a subtest of its own (it would print nothing);
// whatever can show one or select one (-v, a -run or -skip pattern below
// the test, -failfast) gets a subtest for every scenario, as go test -v
// lists them.
func TestPassingScenariosWithoutSubtests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	for _, c := range []struct {
		args []string
		mine string // the name go test gave the test's own subtest
	}{
		{nil, "TestSubtestsChild/baseline"},
		{[]string{"-test.v"}, "TestSubtestsChild/baseline#01"},
		{[]string{"-test.run=^TestSubtestsChild$/"}, "TestSubtestsChild/baseline#01"},
		{[]string{"-test.skip=^TestSubtestsChild$/^nothing$"}, "TestSubtestsChild/baseline#01"},
		{[]string{"-test.failfast"}, "TestSubtestsChild/baseline#01"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			// The child fails after the suite so that its log is printed
			// without -v too.
			out := runSubtestsChild(t, "AGENTIDEM_SUBTESTS_FAIL_AFTER=1", c.args...)
			assert.Contains(t, out, "mine is "+c.mine+"\n", "output:\n%s", out)
			assert.Contains(t, out, "an assertion after the suite failed")
		})
	}
}

// TestSummaryWhenTestFails: the summary of a suite is printed when the test
// fails, even by an assertion after the suite, and under -v; a test that
// passes without -v prints nothing.
func TestSummaryWhenTestFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	const summary = "agentidem TestSubtestsChild: SAFE"
	out := runSubtestsChild(t, "AGENTIDEM_SUBTESTS_FAIL_AFTER=1")
	assert.Contains(t, out, summary, "failed after the suite:\n%s", out)
	out = runSubtestsChild(t, "AGENTIDEM_SUBTESTS_FAIL_AFTER=0", "-test.v")
	assert.Contains(t, out, summary, "-v:\n%s", out)
	out = runSubtestsChild(t, "AGENTIDEM_SUBTESTS_FAIL_AFTER=0")
	assert.NotContains(t, out, summary, "passed:\n%s", out)
	assert.True(t, strings.HasSuffix(out, "PASS\n"), "passed:\n%s", out)
}
