package testkit_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
// changes nothing, first time or repeated, and State sees both. It was
// counted, with a finding that said no effect was seen, since without a
// Settle the suite could not tell it from a write whose effect lands later
// (red team rtT #4: a GORM upsert of stock 40 over 40, UNSAFE in four
// scenarios). Effects, not executions: where nothing of the world could
// land an effect later (Setup left no goroutine running, or none running
// or asleep when the baseline's end was read), the repeat is absorbed,
// with a note; where a goroutine of Setup's sleeps between polls, it is
// not judged, and the scenario is inconclusive with a note that says what
// to give. With a Settle, the repeat is absorbed.
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
	var stop chan struct{}
	var done chan struct{}
	opts := func(poller bool) []testkit.Option {
		return []testkit.Option{
			testkit.Setup(func(context.Context) error {
				l = &tools.Ledger{Rows: map[string]string{"ticket-7": "closed"}}
				stop, done = make(chan struct{}), make(chan struct{})
				if !poller {
					close(done)
					return nil
				}
				go func() { // a worker that polls every 20 ms
					defer close(done)
					for {
						select {
						case <-stop:
							return
						default:
							time.Sleep(20 * time.Millisecond)
						}
					}
				}()
				return nil
			}),
			testkit.Teardown(func(context.Context) error { close(stop); <-done; return nil }),
			testkit.State(func() any { return l.Snapshot() }),
			testkit.With(runtime.OnlyScenario("lost_acknowledgement/put#1")),
			testkit.NoSummary(),
		}
	}
	rep := testkit.Run(&fakeT{name: "TestSetToCurrent"}, agent, opts(false)...)
	assert.True(t, rep.Safe, "%v", rep.Findings)
	require.NotEmpty(t, rep.Results)
	assert.Contains(t, strings.Join(rep.Results[len(rep.Results)-1].Trace.Notes, "\n"), "a write that sets what is already there changes nothing")

	rep = testkit.Run(&fakeT{name: "TestSetToCurrentBesideAPoller"}, agent, opts(true)...)
	assert.Empty(t, rep.Findings)
	require.NotEmpty(t, rep.Results)
	assert.True(t, rep.Results[len(rep.Results)-1].Inconclusive)
	notes := strings.Join(rep.Results[len(rep.Results)-1].Trace.Notes, "\n")
	assert.Contains(t, notes, "was not judged: no execution of put changed the state")
	assert.Contains(t, notes, "give a Settle that waits for that work")
	assert.Contains(t, notes, "declare it idempotent")

	rep = testkit.Run(&fakeT{name: "TestSetToCurrentSettled"}, agent, append(opts(true), testkit.With(runtime.Settle(func(context.Context) error { return nil })))...)
	assert.True(t, rep.Safe, "with a Settle: %v", rep.Findings)
}

// A scenario that shows several problems (a crash that repeats every
// earlier write of the ten-write agent) prints its replay line once, after
// its findings, not once a finding: all of a scenario's findings replay
// alike.
func TestAScenarioPrintsItsReplayLineOnce(t *testing.T) {
	agent, setup := measureAgents()[2].agent()
	ft := &fakeT{name: "TestTenWrites"}
	rep := testkit.TestAgent(ft, agent, testkit.With(setup))
	require.True(t, ft.failed())
	out := strings.Join(ft.errors, "\n")
	several := 0
	for _, res := range rep.Results {
		if len(res.Findings) < 2 {
			continue
		}
		several++
		// Each replay line names its scenario whole ('^post#1$'), so
		// no other scenario's line holds it.
		assert.Equal(t, 1, strings.Count(out, "replay: "+res.Replay),
			"%s: %d findings, one replay line", res.Scenario, len(res.Findings))
	}
	require.Greater(t, several, 5, "crashes and redeliveries repeat several writes")
}

// StateContext judges as State does: the upsert's repeats are absorbed,
// the append's caught, and fn is given a live context while the scenario
// runs.
func TestStateContextJudgesAsState(t *testing.T) {
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
	dead := 0
	state := testkit.StateContext(func(ctx context.Context) any {
		if ctx.Err() != nil {
			dead++
		}
		return l.Snapshot()
	})
	ft := &fakeT{name: "TestUpsert"}
	rep := testkit.TestAgent(ft, upsert, ledgerSetup(&l), state)
	assert.False(t, ft.failed(), "with StateContext the repeats changed nothing: %v", ft.errors)
	assert.True(t, rep.Safe)
	assert.Zero(t, dead, "State's context ended before its scenario did")

	ft = &fakeT{name: "TestLedger"}
	rep = testkit.TestAgent(ft, retrier(&l), ledgerSetup(&l), state)
	require.True(t, ft.failed())
	assert.Contains(t, rep.Problems[0].Message, `the repeat changed the state: entries: 1 → 2 entries, added "hello"`)
}
