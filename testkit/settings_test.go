package testkit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
	"github.com/stretchr/testify/assert"
)

// putOnce is an agent whose every scenario passes: one upsert.
func putOnce(l **tools.Ledger) func(context.Context) error {
	return func(ctx context.Context) error { return (*l).PutTraced(ctx, "k", "v") }
}

// A misspelled AGENTIDEM_SCENARIO fails the test with an error that names
// the closest scenario, also where -run selects a scenario's subtest and
// leaves the baseline's out (a replay line with the variable in front).
// Before, the suite ran the baseline alone and the test passed (red team
// rtI, item 3).
func TestAMisspelledScenarioFailsTheTest(t *testing.T) {
	t.Setenv("AGENTIDEM_SCENARIO", "lost_acknowledgment/put#1")
	var l *tools.Ledger
	for _, ft := range []*filterT{
		{name: "TestLedger", run: func(string) bool { return true }},
		{name: "TestLedger", run: func(name string) bool {
			return strings.HasPrefix(name, "TestLedger/lost_acknowledgement/put#1") ||
				strings.HasPrefix("TestLedger/lost_acknowledgement/put#1", name)
		}},
	} {
		rep := testkit.TestAgent(ft, putOnce(&l), ledgerSetup(&l), testkit.NoSummary())
		all := strings.Join(ft.errors, "\n")
		assert.Contains(t, all, `testkit: AGENTIDEM_SCENARIO="lost_acknowledgment/put#1": names no scenario of this suite (did you mean lost_acknowledgement/put#1?)`)
		assert.Equal(t, 1, strings.Count(all, "names no scenario"), "reported once:\n%s", all)
		assert.Equal(t, 1, rep.InconclusiveCount, "the report reads safe")
	}

	// Run logs it, and its report says the selection did not run.
	ft := &fakeT{name: "TestLedger"}
	rep := testkit.Run(ft, putOnce(&l), ledgerSetup(&l), testkit.With(runtime.OnlyScenario("crash_restart/put#2")))
	assert.False(t, ft.failed())
	assert.Contains(t, strings.Join(ft.logs, "\n"), `testkit: OnlyScenario("crash_restart/put#2"): names no scenario of this suite (did you mean crash_restart/put#1?)`)
	assert.Equal(t, 1, rep.InconclusiveCount)
}

// An AGENTIDEM_* variable whose value does not parse fails the test before
// the agent runs, naming the variable, the value and the form it takes,
// also where -run selects one scenario's subtest (a replay line with the
// variable in front). Before, each was ignored and the suite ran with the
// default in its place: AGENTIDEM_STALL_TIMEOUT=1 with 10 s, and
// AGENTIDEM_FAIL_INCONCLUSIVE=true gated nothing (red team rtI, item 4).
func TestAnEnvironmentVariableThatDoesNotParseFailsTheTest(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"AGENTIDEM_STALL_TIMEOUT", "1", `testkit: AGENTIDEM_STALL_TIMEOUT="1": want a positive duration with its unit`},
		{"AGENTIDEM_SEED", "abc", `testkit: AGENTIDEM_SEED="abc": want a whole number`},
		{"AGENTIDEM_FAIL_INCONCLUSIVE", "on", `testkit: AGENTIDEM_FAIL_INCONCLUSIVE="on": want 1 (or true, yes) to fail the test on an inconclusive scenario, or 0 (or false, no) or no value not to`},
		{"AGENTIDEM_UPDATE", "please", `testkit: AGENTIDEM_UPDATE="please": want 1 (or true, yes) to rewrite golden files`},
		// The agent has no parallel calls, so no exploration, where the
		// shard was read: before, AGENTIDEM_SHARD=x passed (red team
		// rtO, item 8).
		{"AGENTIDEM_SHARD", "x", `testkit: AGENTIDEM_SHARD="x": want i/n with 1 <= i <= n`},
		{"TEST_TOTAL_SHARDS", "0", `testkit: TEST_TOTAL_SHARDS="0": want the number of Bazel's shards`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(c.name, c.value)
			ran := 0
			agent := func(ctx context.Context) error { ran++; return nil }
			ft := &filterT{name: "TestLedger", run: func(name string) bool {
				return strings.HasPrefix(name, "TestLedger/lost_acknowledgement/put#1") ||
					strings.HasPrefix("TestLedger/lost_acknowledgement/put#1", name)
			}}
			rep := testkit.TestAgent(ft, agent, testkit.NoSummary())
			all := strings.Join(ft.errors, "\n")
			assert.Contains(t, all, c.want)
			assert.Equal(t, 1, strings.Count(all, c.name+`="`), "reported once:\n%s", all)
			assert.Zero(t, ran, "the agent ran")
			assert.False(t, rep.Safe)
		})
	}
}

// AGENTIDEM_FAIL_INCONCLUSIVE takes true and yes as 1, as AGENTIDEM_UPDATE
// does: before, only 1 turned the gate on, and true left it off.
func TestFailInconclusiveFromTheEnvironmentTakesTrue(t *testing.T) {
	for _, v := range []string{"true", "YES"} {
		t.Setenv("AGENTIDEM_FAIL_INCONCLUSIVE", v)
		var l *tools.Ledger
		ft := &fakeT{name: "TestFlaky"}
		testkit.TestAgent(ft, firstRunOnly(&l), ledgerSetup(&l), testkit.NoSummary())
		assert.Contains(t, strings.Join(ft.errors, "\n"), "inconclusive (FailInconclusive)", v)
	}
}

// testkit.State(nil) (a State built in a helper that returned nil) fails
// the test before the agent runs, naming the option. Before, the suite ran
// without a State, and its findings asked for one (red team rtV, item 5).
func TestANilStateFailsTheTest(t *testing.T) {
	var l *tools.Ledger
	var state func() any
	for _, c := range []struct {
		opt  testkit.Option
		want string
	}{
		{testkit.State(state), "testkit: State(nil): want a func that returns what the world holds now"},
		{testkit.Invariant("one put", nil), `testkit: Invariant("one put", nil): want a func`},
	} {
		ran := 0
		agent := func(ctx context.Context) error { ran++; return putOnce(&l)(ctx) }
		ft := &filterT{name: "TestLedger", run: func(string) bool { return true }}
		rep := testkit.TestAgent(ft, agent, ledgerSetup(&l), c.opt, testkit.NoSummary())
		all := strings.Join(ft.errors, "\n")
		assert.Contains(t, all, c.want)
		assert.Zero(t, ran, "the agent ran")
		assert.False(t, rep.Safe)
	}
}
