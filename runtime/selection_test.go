package runtime

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runNotes runs the suite of an agent that writes two notes, and returns
// its report, its error and how many times the agent ran.
func runNotes(t *testing.T, opts ...Option) (*Report, error, int64) {
	t.Helper()
	op := &Op{Name: "note", Kind: KindWrite, Params: []string{"n"}}
	var runs atomic.Int64
	agent := func(ctx context.Context) error {
		runs.Add(1)
		for n := range 2 {
			if err := traced(ctx, op, []any{n}, []any{n}, func(context.Context) error { return nil }); err != nil {
				return err
			}
		}
		return nil
	}
	rep, err := Run(context.Background(), t.Name(), agent, opts...)
	return rep, err, runs.Load()
}

// A scenario selection that names none of the suite's scenarios (a
// misspelled lost_acknowledgement) is an error that names the closest
// scenario, and the suite runs nothing but the baseline, whose report
// counts the selection as a scenario that did not run. Before, the suite
// ran the baseline alone and reported it safe, with no word of the
// selection (red team rtI, item 3).
func TestAScenarioSelectionThatNamesNoScenarioIsAnError(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []Option
		env  string
		want string
	}{
		{"option", []Option{OnlyScenario("lost_acknowledgment/note#1")}, "",
			`OnlyScenario("lost_acknowledgment/note#1"): names no scenario of this suite (did you mean lost_acknowledgement/note#1?); its scenarios, closest first: lost_acknowledgement/note#1, `},
		{"environment", nil, "lost_acknowledgment/note#1",
			`AGENTIDEM_SCENARIO="lost_acknowledgment/note#1": names no scenario of this suite (did you mean lost_acknowledgement/note#1?)`},
		{"a write the agent does not make", []Option{OnlyScenario("crash_restart/note#3")}, "",
			`OnlyScenario("crash_restart/note#3"): names no scenario of this suite (did you mean crash_restart/note#1?)`},
		{"far from any", []Option{OnlyScenario("refund")}, "",
			`OnlyScenario("refund"): names no scenario of this suite; its scenarios, closest first: `},
		{"interleavings of an agent without parallel calls", []Option{OnlyScenario(ScenarioInterleaving)}, "",
			`OnlyScenario("interleaving"): names no scenario of this suite`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("AGENTIDEM_SCENARIO", c.env)
			rep, err, runs := runNotes(t, c.opts...)
			var cfg *ConfigError
			require.True(t, errors.As(err, &cfg), "error %v, want a *ConfigError", err)
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "error:\n%s\nwant it to start:\n%s", err, c.want)
			assert.Equal(t, int64(1), runs, "the agent ran more than its baseline")
			require.Len(t, rep.Results, 1)
			res := rep.Results[0]
			assert.True(t, res.Inconclusive)
			assert.Equal(t, []string{"not run: " + err.Error()}, res.Trace.Notes)
			assert.Equal(t, 1, rep.InconclusiveCount, "the report reads safe with the selection unrun")
		})
	}
}

// Every scenario of the suite may be selected by its full name: the
// baseline, a planned fault scenario, and, for an agent with parallel
// calls, a partial batch failure, the interleavings and one schedule.
func TestAScenarioSelectionThatNamesAScenarioRunsIt(t *testing.T) {
	for _, name := range []string{ScenarioBaseline, ScenarioLostAck + "/note#2", ScenarioDuplicateConcurrent} {
		rep, err, _ := runNotes(t, OnlyScenario(name))
		require.NoError(t, err, name)
		if name != ScenarioBaseline {
			require.Len(t, rep.Results, 1, name)
			assert.Equal(t, name, rep.Results[0].Scenario)
			assert.False(t, rep.Results[0].Inconclusive, name)
		}
	}
	for _, name := range []string{ScenarioInterleaving, ScenarioInterleaving + "/s1s0f0f1", ScenarioPartialBatch + "/w2#1"} {
		rep := fanRun(t, 2, OnlyScenario(name)) // fails t on an error
		assert.Zero(t, rep.InconclusiveCount, name)
	}
	var w *fanWorld
	_, err := Run(context.Background(), "fan", func(ctx context.Context) error { return w.agent(ctx, 2) },
		Setup(func(context.Context) error { w = &fanWorld{}; return nil }), OnlyScenario(ScenarioInterleaving+"/s0s9"))
	var cfg *ConfigError
	require.True(t, errors.As(err, &cfg), "a schedule that does not parse: error %v", err)
	assert.Contains(t, err.Error(), "and interleaving/<schedule> for one of its schedules")
}
