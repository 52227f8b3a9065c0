package testkit_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/examples/invoices"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestSummaryOrderChild is run by TestSummaryWhenTestFails in a child
// process: a suite that passes, then one that fails, in one test.
func TestSummaryOrderChild(t *testing.T) {
	if os.Getenv("AGENTIDEM_SUBTESTS_CHILD") != "1" {
		t.Skip("run by TestSummaryWhenTestFails")
	}
	var l *tools.Ledger
	setup := testkit.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil })
	testkit.TestAgent(t, func(ctx context.Context) error {
		return l.PutTraced(ctx, "k", "v") // an upsert: every scenario passes
	}, setup, testkit.State(func() any { return l.Snapshot() }))
	testkit.TestAgent(t, func(ctx context.Context) error {
		return l.PostTraced(ctx, "k", "v") // retried by the crash: a duplicate
	}, setup)
}

// TestSummaryWhenTestFails: the summary of a suite is printed when the test
// fails, even by an assertion after the suite, and under -v; a test that
// passes without -v prints nothing. Summaries come in the order of their
// suites.
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

	cmd := exec.Command(os.Args[0], "-test.run=^TestSummaryOrderChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AGENTIDEM_SUBTESTS_CHILD=1")
	b, _ := cmd.CombinedOutput()
	out = string(b)
	safe := strings.Index(out, "agentidem TestSummaryOrderChild: SAFE")
	unsafe := strings.Index(out, "agentidem TestSummaryOrderChild: UNSAFE")
	require.True(t, safe >= 0 && unsafe >= 0, "both summaries:\n%s", out)
	assert.Less(t, safe, unsafe, "the first suite's summary first:\n%s", out)
}

// TestInterleavingChild is run by TestFailingScheduleGetsItsSubtest in a
// child process: an agent that attaches an invoice while creating it, whose
// listed schedule fails.
func TestInterleavingChild(t *testing.T) {
	if os.Getenv("AGENTIDEM_SUBTESTS_CHILD") != "1" {
		t.Skip("run by TestFailingScheduleGetsItsSubtest")
	}
	var b *invoices.Billing
	testkit.TestAgent(t, func(ctx context.Context) error {
		return (&invoices.DependencyAgent{Billing: b}).Run(ctx)
	}, testkit.Setup(func(context.Context) error { b = invoices.NewBilling(); return nil }))
}

// runChild runs this test binary with args, as a child whose agent fails,
// and returns what it printed.
func runChild(args ...string) string {
	cmd := exec.Command(os.Args[0], append([]string{"-test.count=1"}, args...)...)
	cmd.Env = append(os.Environ(), "AGENTIDEM_SUBTESTS_CHILD=1")
	out, _ := cmd.CombinedOutput() // the agent fails
	return string(out)
}

// TestFailingScheduleGetsItsSubtest: without -v, a failing schedule gets
// its subtest under interleaving after the exploration, and its replay
// line reruns that schedule alone.
func TestFailingScheduleGetsItsSubtest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary twice")
	}
	out := runChild("-test.run=^TestInterleavingChild$")
	require.Contains(t, out, "--- FAIL: TestInterleavingChild/interleaving/s0s1f0f1 ", "output:\n%s", out)
	replay := ""
	for _, m := range replayRE.FindAllStringSubmatch(out, -1) {
		if strings.HasSuffix(m[1], "/^interleaving$/^s0s1f0f1$") {
			replay = m[1]
		}
	}
	require.NotEmpty(t, replay, "no replay line of interleaving/s0s1f0f1:\n%s", out)

	rerun := runChild("-test.run="+replay, "-test.v")
	var ran []string
	for _, line := range strings.Split(rerun, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "=== RUN   "); ok && strings.Count(name, "/") == 2 {
			ran = append(ran, name)
		}
	}
	assert.Equal(t, []string{"TestInterleavingChild/interleaving/s0s1f0f1"}, ran, "the replay line %q ran:\n%s", replay, rerun)
	assert.Contains(t, rerun, "--- FAIL: TestInterleavingChild/interleaving/s0s1f0f1 ")
}

// touchOp is a write declared idempotent: its repeats are absorbed.
var touchOp = &runtime.Op{Name: "touch", Kind: runtime.KindWrite, Params: []string{"key"}, Idempotent: true}

// TestRepeatsChild is run by TestRepeatedProblemFailsOnce in a child
// process: an agent that posts once and then touches two keys (declared
// idempotent); a crash after any of the three or a second delivery
// repeats the post, so that five scenarios show one duplicate_write.
func TestRepeatsChild(t *testing.T) {
	if os.Getenv("AGENTIDEM_SUBTESTS_CHILD") != "1" {
		t.Skip("run by TestRepeatedProblemFailsOnce")
	}
	var l *tools.Ledger
	testkit.TestAgent(t, func(ctx context.Context) error {
		if err := l.PostTraced(ctx, "entry-0", "x"); err != nil {
			return err
		}
		for _, k := range []string{"k1", "k2"} {
			if err := tracedCall(ctx, touchOp, []any{k}, []any{k}, nil, func(context.Context) error { return nil }); err != nil {
				return err
			}
		}
		return nil
	}, testkit.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil }))
}

// TestRepeatedProblemFailsOnce: without -v, one problem shown by five
// scenarios fails one subtest, the first scenario's, where it is printed in
// full; the summary names the five and replays the second, and that replay
// line fails that scenario alone. With -v every scenario has its subtest,
// and each of the five fails.
func TestRepeatedProblemFailsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	failed := func(out string) []string {
		var names []string
		for _, line := range strings.Split(out, "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: TestRepeatsChild/"); ok {
				names = append(names, strings.Fields(rest)[0])
			}
		}
		return names
	}
	shows := []string{"crash_restart/post#1", "crash_restart/touch#1", "crash_restart/touch#2", "duplicate_delivery/sequential", "duplicate_delivery/concurrent"}

	out := runChild("-test.run=^TestRepeatsChild$")
	assert.Equal(t, shows[:1], failed(out), "output:\n%s", out)
	assert.Contains(t, out, `duplicate_write post for identity "entry-0": `+strings.Join(shows, ", "), "output:\n%s", out)
	m := regexp.MustCompile(`replay crash_restart/touch#1 \(each scenario named here replays alike\): go test -run '([^']+)'`).FindStringSubmatch(out)
	require.NotNil(t, m, "no replay line for the second scenario:\n%s", out)
	// With a -run pattern below the test, scenarios run under their
	// group's subtest, which fails with them.
	scenarios := func(out string) []string {
		var names []string
		for _, name := range failed(out) {
			if strings.Contains(name, "/") {
				names = append(names, name)
			}
		}
		return names
	}
	rerun := runChild("-test.run=" + m[1])
	assert.Equal(t, []string{"crash_restart/touch#1"}, scenarios(rerun), "the replay line %q ran:\n%s", m[1], rerun)

	out = runChild("-test.run=^TestRepeatsChild$", "-test.v")
	assert.ElementsMatch(t, shows, scenarios(out), "-v:\n%s", out)
}

// notifyOp is a write that is not idempotent, of another kind than post.
var notifyOp = &runtime.Op{Name: "notify", Kind: runtime.KindWrite, Params: []string{"key"}}

// TestIdentitiesChild is run by TestOneSubtestPerKindOfProblem in a child
// process: an agent that posts two entries, notifies, and posts a third,
// none of it idempotent. A crash after a write repeats every write before
// it: post's duplicate is a problem for each identity it repeats.
func TestIdentitiesChild(t *testing.T) {
	if os.Getenv("AGENTIDEM_SUBTESTS_CHILD") != "1" {
		t.Skip("run by TestOneSubtestPerKindOfProblem")
	}
	var l *tools.Ledger
	testkit.TestAgent(t, func(ctx context.Context) error {
		for _, k := range []string{"entry-0", "entry-1"} {
			if err := l.PostTraced(ctx, k, "x"); err != nil {
				return err
			}
		}
		if err := tracedCall(ctx, notifyOp, []any{"n"}, []any{"n"}, nil, func(context.Context) error { return nil }); err != nil {
			return err
		}
		return l.PostTraced(ctx, "entry-2", "x")
	}, testkit.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil }))
}

// TestOneSubtestPerKindOfProblem: without -v, a scenario whose errors are
// all of a code and op an earlier subtest failed with, for another
// identity too, gets no subtest. crash_restart/post#2 shows post's
// duplicate for "entry-1", new, beside the one for "entry-0" that post#1
// printed in full, and is folded; notify#1 shows notify's, a kind of its
// own, fails, and prints entry-1's in full too; post#3 shows entry-2's,
// folded, and nothing prints it. The summary says where each was printed
// and replays its first scenario, whose replay line prints it in full.
func TestOneSubtestPerKindOfProblem(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	failed := func(out string) []string {
		var names []string
		for _, line := range strings.Split(out, "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: TestIdentitiesChild/"); ok {
				names = append(names, strings.Fields(rest)[0])
			}
		}
		return names
	}
	out := runChild("-test.run=^TestIdentitiesChild$")
	assert.Equal(t, []string{"crash_restart/post#1", "crash_restart/notify#1"}, failed(out), "output:\n%s", out)
	assert.Contains(t, out, "problems (each printed in full under the first scenario that shows it, unless its line says where):", "output:\n%s", out)
	for _, id := range []string{"entry-0", "entry-1"} {
		assert.Equal(t, 1, strings.Count(out, `post executed 2 times for identity "`+id+`"`), "%s's finding printed in full once:\n%s", id, out)
	}
	assert.NotContains(t, out, `post executed 2 times for identity "entry-2"`, "output:\n%s", out)
	// entry-0's was printed under its first scenario, and its line
	// replays the second, as before.
	assert.Regexp(t, `duplicate_write post for identity "entry-0": crash_restart/post#1, [^\n]*\n\s+replay crash_restart/post#2 \(each`, out)
	assert.Regexp(t, `duplicate_write post for identity "entry-1": crash_restart/post#2, [^\n]*\n\s+printed in full under crash_restart/notify#1; replay crash_restart/post#2 \(each`, out)
	m := regexp.MustCompile(`duplicate_write post for identity "entry-2": crash_restart/post#3, [^\n]*\n\s+printed in full for another identity under crash_restart/post#1; replay crash_restart/post#3 \(each scenario named here replays alike\): go test -run '([^']+)'`).FindStringSubmatch(out)
	require.NotNil(t, m, "no replay line for entry-2's first scenario:\n%s", out)

	rerun := runChild("-test.run=" + m[1])
	var scenarios []string
	for _, name := range failed(rerun) {
		if strings.Contains(name, "/") {
			scenarios = append(scenarios, name)
		}
	}
	assert.Equal(t, []string{"crash_restart/post#3"}, scenarios, "the replay line %q ran:\n%s", m[1], rerun)
	assert.Contains(t, rerun, `post executed 2 times for identity "entry-2"`, "the replay prints entry-2's finding in full:\n%s", rerun)

	out = runChild("-test.run=^TestIdentitiesChild$", "-test.v")
	assert.Subset(t, failed(out), []string{"crash_restart/post#2", "crash_restart/post#3"}, "-v: every scenario has its subtest:\n%s", out)
	assert.Contains(t, out, `post executed 2 times for identity "entry-2"`, "-v:\n%s", out)
}
