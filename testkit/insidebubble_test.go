package testkit_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
	"github.com/stretchr/testify/assert"
)

// TestInsideBubbleChild is run by TestSuiteInsideASynctestBubble in a
// child process: TestAgent, inside synctest.Test, on the agent that
// retries a post without a key (a duplicate_write), then on an upsert
// (which passes), then on two upserts at once with VirtualTime (which
// pass), then the same suites outside the bubble.
func TestInsideBubbleChild(t *testing.T) {
	if os.Getenv("AGENTIDEM_BUBBLE_CHILD") != "1" {
		t.Skip("run by TestSuiteInsideASynctestBubble")
	}
	suites := func(t *testing.T) {
		var l *tools.Ledger
		testkit.TestAgent(t, retrier(&l), ledgerSetup(&l))
		testkit.TestAgent(t, func(ctx context.Context) error {
			return l.PutTraced(ctx, "k", "v")
		}, ledgerSetup(&l), testkit.State(func() any { return l.Snapshot() }))
		// Two upserts at once, whose interleavings VirtualTime would run
		// in a bubble of the suite's own: inside the test's, synctest.Test
		// panicked ("synctest.Run called from within a synctest bubble").
		testkit.TestAgent(t, func(ctx context.Context) error {
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, k := range []string{"a", "b"} {
				wg.Go(func() { errs[i] = l.PutTraced(ctx, k, "v") })
			}
			wg.Wait()
			return errors.Join(errs...)
		}, ledgerSetup(&l), testkit.State(func() any { return l.Snapshot() }), testkit.VirtualTime())
	}
	// synctest.Test ends its test when the bubble's failed (FailNow): the
	// suites outside run in the parent, after.
	t.Run("bubble", func(t *testing.T) { synctest.Test(t, suites) })
	suites(t)
}

// A suite run inside a testing/synctest bubble (the test's own
// synctest.Test) ran into testing's rule that a bubble has no subtests: a
// failing scenario's subtest panicked ("t.Run called inside synctest
// bubble"), under go test -v at once; and its Setup's timer, pooled, ended
// the test binary when a suite outside the bubble reset it ("fatal error:
// reset of synctest timer from outside bubble"). Inside a bubble now each
// failing scenario's findings are written in the test after its name, the
// summary too, a correct agent passes, and suites after it outside run as
// ever.
func TestSuiteInsideASynctestBubble(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	for _, args := range [][]string{nil, {"-test.v"}} {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestInsideBubbleChild$", "-test.count=1"}, args...)...)
		cmd.Env = append(os.Environ(), "AGENTIDEM_BUBBLE_CHILD=1")
		b, err := cmd.CombinedOutput()
		out := string(b)
		assert.Error(t, err, "%v: the buggy agent's suites must fail the test\n%s", args, out)
		for _, no := range []string{"panic", "fatal error"} {
			assert.NotContains(t, out, no, "%v:\n%s", args, out)
		}
		assert.Contains(t, out, "inside a testing/synctest bubble, which allows no subtests", "%v", args)
		assert.Contains(t, out, `lost_acknowledgement/post#1: [duplicate_write] post executed 2 times for identity "entry-1"`, "%v:\n%s", args, out)
		// The bubble's two suites and the two outside: the buggy agent
		// UNSAFE, the upsert SAFE, each time.
		assert.Equal(t, 2, strings.Count(out, ": UNSAFE"), "%v:\n%s", args, out)
		if len(args) > 0 { // a passing suite's summary shows under -v only
			assert.Equal(t, 4, strings.Count(out, ": SAFE"), "%v:\n%s", args, out)
			assert.Contains(t, out, "2 schedules", "%v: the interleavings did not run:\n%s", args, out)
		}
		// Outside the bubble the failing scenario has its subtest.
		assert.Contains(t, out, "--- FAIL: TestInsideBubbleChild/lost_acknowledgement/post#1", "%v:\n%s", args, out)
	}
}
