package testkit_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/examples/invoices"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file check the promise of a replay line: pasted back as
// printed, it fails with the finding it was printed for. Each runs a child
// test of this binary, takes a replay line from its output, and runs the
// line as a shell would: its VAR=value words set the environment (and
// nothing else of the line's variables is inherited), its -run pattern
// selects the tests.

// replayChildEnv marks the child process; the child tests skip without it.
const replayChildEnv = "AGENTIDEM_REPLAY_CHILD"

// replayedVars are the variables a replay line may set: the child gets them
// only from the line, never from the parent's environment.
var replayedVars = []string{"AGENTIDEM_SEED", "AGENTIDEM_SHARD", "AGENTIDEM_SCHEDULE", "AGENTIDEM_SCENARIO"}

// runReplayChild runs this test binary with args and the environment vars
// (VAR=value) on top of the parent's, less replayedVars, and returns what
// it printed.
func runReplayChild(vars []string, args ...string) string {
	cmd := exec.Command(os.Args[0], append([]string{"-test.count=1"}, args...)...)
	env := []string{replayChildEnv + "=1"}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(replayedVars, name) {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, vars...)
	out, _ := cmd.CombinedOutput() // the child fails when its agent does
	return string(out)
}

// printedReplayRE matches a printed replay line: the variables it sets,
// then the go test command's -run pattern.
var printedReplayRE = regexp.MustCompile(`replay: ((?:[A-Z_]+=\S+ )*)go test -run '([^']+)'`)

// pasteReplay runs the replay line m (a match of printedReplayRE) against
// this test binary, as a shell would run it pasted back.
func pasteReplay(m []string) string {
	return runReplayChild(strings.Fields(m[1]), "-test.run="+m[2])
}

// TestReplayOrderChild is run by
// TestAnOrderFindingOfTheBaselineFailsItsReplayLine in a child process: an
// agent that creates an invoice and attaches it in parallel, against an API
// that refuses to attach an unknown invoice, so that the listed order fails
// and the reverse passes.
func TestReplayOrderChild(t *testing.T) {
	if os.Getenv(replayChildEnv) != "1" {
		t.Skip("run by TestAnOrderFindingOfTheBaselineFailsItsReplayLine")
	}
	var b *invoices.Billing
	testkit.TestAgent(t, func(ctx context.Context) error {
		return (&invoices.DependencyAgent{Billing: b}).Run(ctx)
	}, testkit.Setup(func(context.Context) error { b = invoices.NewBilling(); b.Strict = true; return nil }))
}

// An ordering finding the baseline made (the listed order failed, the
// reverse passed) is reported once, under the baseline, and its replay line
// fails with it. The line selected the listed schedule's interleaving
// subtest, which does not report the finding again, and go test printed ok
// (red team rtI, item 1).
func TestAnOrderFindingOfTheBaselineFailsItsReplayLine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary twice")
	}
	const finding = "[dependent_calls_concurrent] attachInvoice dispatched concurrently"
	out := runReplayChild(nil, "-test.run=^TestReplayOrderChild$")
	require.Contains(t, out, "--- FAIL: TestReplayOrderChild/baseline ", "output:\n%s", out)
	assert.Equal(t, 1, strings.Count(out, finding), "the finding is reported once in a whole run:\n%s", out)
	_, after, ok := strings.Cut(out, finding)
	require.True(t, ok, "output:\n%s", out)
	m := printedReplayRE.FindStringSubmatch(after)
	require.NotNil(t, m, "no replay line after the finding:\n%s", out)

	rerun := pasteReplay(m)
	assert.Contains(t, rerun, finding, "the replay line %q did not show the finding:\n%s", m[0], rerun)
	assert.Contains(t, rerun, "--- FAIL: TestReplayOrderChild", "the replay line %q passed:\n%s", m[0], rerun)
}
