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
