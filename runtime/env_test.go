package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An AGENTIDEM_* variable whose value does not parse stops the suite before
// the agent runs, with an error that names the variable, the value and the
// form it takes; the baseline's result says it did not run, and the report
// is not safe. Before, each was ignored and the suite ran with the default
// in its place (a stall bound of 10 s for AGENTIDEM_STALL_TIMEOUT=1, seed 1
// for AGENTIDEM_SEED=abc) and reported on that suite (red team rtI, item
// 4).
func TestAnEnvironmentVariableThatDoesNotParseStopsTheSuite(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"AGENTIDEM_SEED", "abc", `AGENTIDEM_SEED="abc": want a whole number, the seed of the PCT sampler (AGENTIDEM_SEED=2)`},
		{"AGENTIDEM_STALL_TIMEOUT", "1", `AGENTIDEM_STALL_TIMEOUT="1": want a positive duration with its unit, as time.ParseDuration reads it (AGENTIDEM_STALL_TIMEOUT=30s, 2m)`},
		{"AGENTIDEM_STALL_TIMEOUT", "bogus", `AGENTIDEM_STALL_TIMEOUT="bogus": want a positive duration`},
		{"AGENTIDEM_STALL_TIMEOUT", "-5s", `AGENTIDEM_STALL_TIMEOUT="-5s": want a positive duration`},
		{"AGENTIDEM_SCHEDULE", "s0s1f1", `AGENTIDEM_SCHEDULE="s0s1f1": want a schedule as a replay line prints it (AGENTIDEM_SCHEDULE='s0s1f0f1', rounds joined by a dot): schedule "s0s1f1": round 1: every call needs s and f`},
		{"AGENTIDEM_GC", "off", `AGENTIDEM_GC="off": want default, which leaves the garbage collector's pacing as it is while suites run, or no value`},
		// An agent with no parallel calls explores no schedule, where the
		// shard was read: before, there AGENTIDEM_SHARD=x ran the whole
		// suite and passed (red team rtO, item 8).
		{"AGENTIDEM_SHARD", "x", `AGENTIDEM_SHARD="x": want i/n with 1 <= i <= n (AGENTIDEM_SHARD=2/4 runs the second of four shards)`},
		{"AGENTIDEM_SHARD", "4/3", `AGENTIDEM_SHARD="4/3": want i/n`},
		{"TEST_TOTAL_SHARDS", "three", `TEST_TOTAL_SHARDS="three": want the number of Bazel's shards, a whole number from 1`},
	} {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			t.Setenv(c.name, c.value)
			rep, err, runs := runNotes(t)
			var cfg *ConfigError
			require.True(t, errors.As(err, &cfg), "error %v, want a *ConfigError", err)
			assert.Equal(t, ConfigError{Setting: c.name, Value: c.value, Want: cfg.Want}, *cfg)
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "error:\n%s\nwant it to start:\n%s", err, c.want)
			assert.Zero(t, runs, "the agent ran")
			assert.False(t, rep.Safe)
			assert.False(t, rep.BaselineSucceeded)
			assert.Empty(t, rep.Results)
			assert.Equal(t, []string{"not run: " + err.Error()}, rep.Baseline.Trace.Notes)
		})
	}
}

// Bazel's shard index out of its range, and AGENTIDEM_SHARD naming
// another shard than Bazel's, stop a suite without parallel calls too;
// a ShardOf option wins over both, which are then not read; values that
// parse, agreeing, run the suite (whose two notes are duplicates under a
// second delivery: not safe, but run).
func TestAShardSettingThatDoesNotFitStopsASuiteWithoutParallelCalls(t *testing.T) {
	t.Setenv("TEST_SHARD_STATUS_FILE", "")
	t.Setenv("TEST_TOTAL_SHARDS", "3")
	for _, c := range []struct{ index, own, want string }{
		{"3", "", `TEST_SHARD_INDEX="3": want Bazel's shard index, a whole number from 0 to 2 with TEST_TOTAL_SHARDS=3`},
		{"", "", `TEST_SHARD_INDEX="": want Bazel's shard index`},
		{"0", "2/3", `AGENTIDEM_SHARD="2/3": it and TEST_TOTAL_SHARDS="3", TEST_SHARD_INDEX="0" (shard 1/3) name different shards: set one of them`},
	} {
		t.Setenv("TEST_SHARD_INDEX", c.index)
		t.Setenv("AGENTIDEM_SHARD", c.own)
		rep, err, runs := runNotes(t)
		var cfg *ConfigError
		require.True(t, errors.As(err, &cfg), "error %v, want a *ConfigError", err)
		assert.True(t, strings.HasPrefix(err.Error(), c.want), "error:\n%s\nwant it to start:\n%s", err, c.want)
		assert.Zero(t, runs, "the agent ran")
		assert.False(t, rep.Safe)

		rep, err, runs = runNotes(t, ShardOf(1, 1))
		require.NoError(t, err, "ShardOf wins")
		assert.True(t, rep.BaselineSucceeded)
		assert.NotZero(t, runs)
	}
	t.Setenv("TEST_SHARD_INDEX", "1")
	t.Setenv("AGENTIDEM_SHARD", "2/3")
	rep, err, runs := runNotes(t)
	require.NoError(t, err)
	assert.True(t, rep.BaselineSucceeded)
	assert.NotZero(t, runs)
}

// Several variables that do not parse are all named at once.
func TestEveryVariableThatDoesNotParseIsNamed(t *testing.T) {
	t.Setenv("AGENTIDEM_SEED", "1.5")
	t.Setenv("AGENTIDEM_STALL_TIMEOUT", "10")
	_, err, _ := runNotes(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `AGENTIDEM_SEED="1.5"`)
	assert.Contains(t, err.Error(), `AGENTIDEM_STALL_TIMEOUT="10"`)
}

// Values that parse are taken, and an option given in the test overrides
// its variable, which is then not read at all.
func TestEnvironmentVariablesThatParseAreTaken(t *testing.T) {
	t.Setenv("AGENTIDEM_STALL_TIMEOUT", "30s")
	t.Setenv("AGENTIDEM_SEED", "7")
	rep, err, _ := runNotes(t)
	require.NoError(t, err)
	assert.Equal(t, int64(7), rep.Seed)
	agent := func(context.Context) error { return nil }
	assert.Equal(t, 30*time.Second, NewSuite("s", agent).StallTimeout())

	t.Setenv("AGENTIDEM_STALL_TIMEOUT", "bogus")
	t.Setenv("AGENTIDEM_SEED", "abc")
	rep, err, _ = runNotes(t, Seed(3), StallTimeout(time.Second))
	require.NoError(t, err)
	assert.Equal(t, int64(3), rep.Seed)
	assert.Equal(t, time.Second, NewSuite("s", agent, StallTimeout(time.Second)).StallTimeout())
}

// A ShardOf out of range stops a suite without parallel calls as a
// malformed AGENTIDEM_SHARD does, with a *ConfigError naming the option:
// before, only the exploration of parallel calls read it, so such an agent
// ran its whole suite and passed with ShardOf(0, 2) (fS). An agent with
// parallel calls stops before its baseline too, and a ShardOf in range
// runs both.
func TestAShardOfOutOfRangeStopsASuiteWithoutParallelCalls(t *testing.T) {
	t.Setenv("AGENTIDEM_SHARD", "")
	t.Setenv("TEST_TOTAL_SHARDS", "")
	for _, c := range []struct{ index, total int }{{0, 2}, {3, 2}, {1, 0}, {-1, -1}} {
		rep, err, runs := runNotes(t, ShardOf(c.index, c.total))
		var cfg *ConfigError
		require.True(t, errors.As(err, &cfg), "ShardOf(%d, %d): error %v, want a *ConfigError", c.index, c.total, err)
		assert.Equal(t, fmt.Sprintf("ShardOf(%d, %d): want 1 <= index <= total (ShardOf(2, 4) runs the second of four shards)", c.index, c.total), err.Error())
		assert.Zero(t, runs, "the agent ran")
		assert.False(t, rep.Safe)
		assert.False(t, rep.BaselineSucceeded)
		assert.Equal(t, []string{"not run: " + err.Error()}, rep.Baseline.Trace.Notes)
	}
	rep, err, runs := runNotes(t, ShardOf(2, 2))
	require.NoError(t, err)
	assert.True(t, rep.BaselineSucceeded)
	assert.NotZero(t, runs)

	var w *fanWorld
	opts := []Option{Setup(func(context.Context) error { w = &fanWorld{}; return nil }), ShardOf(3, 2)}
	_, err = Run(context.Background(), "fan", func(ctx context.Context) error { return w.agent(ctx, 2) }, opts...)
	var cfg *ConfigError
	require.True(t, errors.As(err, &cfg), "parallel calls: error %v, want a *ConfigError", err)
	assert.Equal(t, "ShardOf", cfg.Setting)
	assert.NotEmpty(t, schedulesOf(fanRun(t, 2, ShardOf(1, 2))), "a ShardOf in range explores")
}
