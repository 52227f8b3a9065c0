package testkit_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/examples/invoices"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
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
	const finding = "attachInvoice dispatched concurrently with its prerequisite" // invoices.attachInvoice in this binary, which links two packages declaring attachInvoice (runtime.Declare)
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

// tally is a world of numbers added to one account, in the order they
// landed.
type tally struct {
	mu     sync.Mutex
	landed []int
}

var addOp = &runtime.Op{Name: "add", Kind: runtime.KindWrite, Params: []string{"account", "n"}}

// add lands n on account A: one entity, so that every order of the calls
// is explored (calls on different entities commute).
func (w *tally) add(ctx context.Context, n int) (err error) {
	c, _ := runtime.Begin(ctx, addOp, []any{"A", n}, []any{"A", n}, []any{"A"})
	if err = c.Start(); err != nil {
		return err
	}
	w.mu.Lock()
	w.landed = append(w.landed, n)
	w.mu.Unlock()
	return c.Finish(nil)
}

// TestReplaySeededChild is run by TestAReplayLineOfASeededRunSetsTheSeed in
// a child process: five adds in parallel, a round too large to enumerate,
// so that PCT samples its orders; the invariant fails in the orders that
// land 2 and then 4 first.
func TestReplaySeededChild(t *testing.T) {
	if os.Getenv(replayChildEnv) != "1" {
		t.Skip("run by TestAReplayLineOfASeededRunSetsTheSeed")
	}
	var w *tally
	testkit.TestAgent(t, func(ctx context.Context) error {
		g, ctx := errgroup.WithContext(ctx)
		for i := range 5 {
			g.Go(func() error { return w.add(ctx, i) })
		}
		return g.Wait()
	}, testkit.Setup(func(context.Context) error { w = &tally{}; return nil }),
		testkit.Invariant("2 and 4 do not land first", func(*runtime.Trace) error {
			if l := w.landed; len(l) == 5 && l[0] == 2 && l[1] == 4 {
				return errors.New("2 and 4 landed first")
			}
			return nil
		}),
		testkit.With(runtime.OnlyScenario(runtime.ScenarioInterleaving)),
		testkit.Schedules(200))
}

// A replay line of a schedule that AGENTIDEM_SEED's sample found sets the
// seed, as one of a shard sets the shard: without it, the line ran the
// sample of seed 1, which did not hold that schedule, and go test printed
// ok [no tests to run] (red team rtI, item 2).
func TestAReplayLineOfASeededRunSetsTheSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary twice")
	}
	out := runReplayChild([]string{"AGENTIDEM_SEED=2"}, "-test.run=^TestReplaySeededChild$")
	_, after, ok := strings.Cut(out, "2 and 4 landed first")
	require.True(t, ok, "the seed's sample holds no failing order:\n%s", out)
	m := printedReplayRE.FindStringSubmatch(after)
	require.NotNil(t, m, "no replay line after the finding:\n%s", out)
	require.Contains(t, m[2], "/^interleaving$/", "not a schedule's replay line: %s", m[0])
	assert.Equal(t, "AGENTIDEM_SEED=2 ", m[1], "the replay line %q does not set the seed", m[0])

	rerun := pasteReplay(m)
	assert.Contains(t, rerun, "2 and 4 landed first", "the replay line %q did not show the finding:\n%s", m[0], rerun)
	assert.Contains(t, rerun, "--- FAIL: TestReplaySeededChild", "the replay line %q passed:\n%s", m[0], rerun)
}

// TestReplayBrokenBaselineChild is run by
// TestAReplayLineFailsWhenTheBaselineFails in a child process: an agent
// whose baseline fails (its first write errs), as after a regression.
func TestReplayBrokenBaselineChild(t *testing.T) {
	if os.Getenv(replayChildEnv) != "1" {
		t.Skip("run by TestAReplayLineFailsWhenTheBaselineFails")
	}
	var w *tally
	testkit.TestAgent(t, func(ctx context.Context) error {
		if err := w.add(ctx, 1); err != nil {
			return err
		}
		if os.Getenv("AGENTIDEM_REPLAY_BREAK") == "1" {
			return errors.New("the second add is refused: a regression")
		}
		return w.add(ctx, 2)
	}, testkit.Setup(func(context.Context) error { w = &tally{}; return nil }))
}

// A replay line selects one scenario's subtest, not the baseline's. Pasted
// back after the agent broke so that its baseline fails, no scenario runs:
// the test passed, with nothing printed (red team rtI, noticed with item
// 1). The baseline's failure fails the test itself.
func TestAReplayLineFailsWhenTheBaselineFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary twice")
	}
	out := runReplayChild(nil, "-test.run=^TestReplayBrokenBaselineChild$", "-test.v")
	require.Contains(t, out, "--- PASS: TestReplayBrokenBaselineChild/lost_acknowledgement/add#1 ", "output:\n%s", out)

	broken := runReplayChild([]string{"AGENTIDEM_REPLAY_BREAK=1"}, "-test.run=^TestReplayBrokenBaselineChild$/^lost_acknowledgement$/^add#1$")
	assert.Contains(t, broken, "--- FAIL: TestReplayBrokenBaselineChild ", "the replay line passed with a failing baseline:\n%s", broken)
	assert.Contains(t, broken, "the second add is refused: a regression", "the baseline's failure is not printed:\n%s", broken)
}
