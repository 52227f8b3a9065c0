package testkit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// output is everything a fakeT printed: errors reach the root, and the
// summary is the root's log.
func output(f *fakeT) string {
	return strings.Join(append(append([]string{}, f.logs...), f.errors...), "\n")
}

func TestEachFindingIsPrintedOnce(t *testing.T) {
	var l *tools.Ledger
	ft := &fakeT{name: "TestLedger"}
	rep := testkit.TestAgent(ft, retrier(&l), ledgerSetup(&l))
	require.True(t, ft.failed())
	// The retrying agent posts twice under several faults: one problem.
	var dup runtime.Finding
	for _, p := range rep.Problems {
		if p.Code == runtime.CodeDuplicateWrite {
			dup = p
		}
	}
	require.GreaterOrEqual(t, len(dup.SeenIn), 3, "the duplicate post shows in several scenarios")
	out := output(ft)
	assert.Equal(t, 1, strings.Count(out, "post executed 2 times"), "the finding's text is printed once:\n%s", out)
	// Every scenario that shows it still fails, with its own replay line.
	for _, in := range dup.SeenIn {
		assert.Contains(t, out, "replay: "+in.Replay)
	}
	assert.Contains(t, out, `[duplicate_write] post for identity "entry-1", as in `+dup.SeenIn[0].Scenario+" (printed there)")
	assert.Contains(t, out, "problems (each printed in full under the first scenario that shows it):")
}

func TestStateAbsorbsAnUpsertAndCatchesAnAppend(t *testing.T) {
	// upsert writes the entry under its key: a repeat changes nothing.
	var l *tools.Ledger
	upsert := func(ctx context.Context) error {
		var err error
		for range 3 {
			if err = l.PutTraced(ctx, "entry-1", "hello"); err == nil {
				return nil
			}
		}
		return err
	}
	state := testkit.State(func() any { return l.Snapshot() })
	ft := &fakeT{name: "TestUpsert"}
	rep := testkit.TestAgent(ft, upsert, ledgerSetup(&l))
	assert.True(t, ft.failed(), "without State or a declaration every repeat counts")
	ft = &fakeT{name: "TestUpsert"}
	rep = testkit.TestAgent(ft, upsert, ledgerSetup(&l), state)
	assert.False(t, ft.failed(), "with State the repeats changed nothing: %v", ft.errors)
	assert.True(t, rep.Safe)

	// The appending agent is still caught, with what the repeat did.
	ft = &fakeT{name: "TestLedger"}
	rep = testkit.TestAgent(ft, retrier(&l), ledgerSetup(&l), state)
	require.True(t, ft.failed())
	assert.Contains(t, rep.Problems[0].Message, `the repeat changed the state: entries: 1 → 2 entries, added "hello"`)
}

// TestUnseenRepeatSaysNothingWasSeen: a set to the value a row already has
// changes nothing, first time or repeated, and State sees both. Without a
// Settle the suite cannot tell it from a write whose effect lands later,
// so the repeat still counts, but the finding says that no effect was
// seen and how to tell the suite which it is; it does not claim "one
// effect done 2 times". With a Settle, or the op declared idempotent, the
// repeat is absorbed.
func TestUnseenRepeatSaysNothingWasSeen(t *testing.T) {
	var l *tools.Ledger
	agent := func(ctx context.Context) error {
		var err error
		for range 3 { // retries on a timeout
			if err = l.PutTraced(ctx, "ticket-7", "closed"); err == nil {
				return nil
			}
		}
		return err
	}
	opts := []testkit.Option{
		testkit.Setup(func(context.Context) error {
			l = &tools.Ledger{Rows: map[string]string{"ticket-7": "closed"}}
			return nil
		}),
		testkit.State(func() any { return l.Snapshot() }),
		testkit.With(runtime.OnlyScenario("lost_acknowledgement/put#1")),
		testkit.NoSummary(),
	}
	rep := testkit.Run(&fakeT{name: "TestSetToCurrent"}, agent, opts...)
	var msg string
	for _, f := range rep.Findings {
		if f.Code == runtime.CodeDuplicateWrite {
			msg = f.Message
		}
	}
	require.NotEmpty(t, msg, "no duplicate_write: %v", rep.Findings)
	assert.Contains(t, msg, "State saw no execution change the world")
	assert.Contains(t, msg, "give a Settle (testkit.SettleOn)")
	assert.Contains(t, msg, "declare the op idempotent")
	assert.NotContains(t, msg, "one effect done")

	rep = testkit.Run(&fakeT{name: "TestSetToCurrentSettled"}, agent, append(opts, testkit.With(runtime.Settle(func(context.Context) error { return nil })))...)
	assert.True(t, rep.Safe, "with a Settle: %v", rep.Findings)
}
