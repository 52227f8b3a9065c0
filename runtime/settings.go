package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentidem/agentidem-go/internal/editdist"
)

// ConfigError is a setting the suite cannot run as asked: an AGENTIDEM_*
// environment variable whose value does not parse (AGENTIDEM_SEED=abc,
// AGENTIDEM_STALL_TIMEOUT=1 without its unit), or a scenario selection
// (OnlyScenario, AGENTIDEM_SCENARIO) that names none of the suite's
// scenarios, or a State that failed in the baseline (stateerror.go).
// Falling back would run another suite than the one asked for
// and call it safe: a misspelled scenario ran the baseline alone and
// reported SAFE, a bad seed ran seed 1's sample, a stall bound without its
// unit ran with 10 s. So Baseline returns the error (joined with the
// others, for several variables) and the suite runs nothing more (Run
// returns it too): a variable that does not parse stops it before the
// baseline, whose result then says it did not run, and a selection once
// the baseline showed what the scenarios are, the report counting the
// selection as a scenario that did not run. testkit fails the test with
// it, whatever -run selects. A malformed AGENTIDEM_SHARD (or Bazel's
// TEST_TOTAL_SHARDS and TEST_SHARD_INDEX) is one too, for an agent that
// explores no schedule as well, and so is a ShardOf out of range. (A
// schedule that does not fit the agent is an error of the exploration,
// which Interleavings returns.)
type ConfigError struct {
	// Setting is what was set: an environment variable
	// ("AGENTIDEM_SCENARIO") or an option ("OnlyScenario").
	Setting string
	// Value is the value it was given.
	Value string
	// Want says what the setting takes, or why the value fits nothing.
	Want string
}

// Error names the setting and its value, and says what it takes:
// AGENTIDEM_SEED="abc": want a whole number, ...
func (e *ConfigError) Error() string {
	if strings.HasPrefix(e.Setting, "AGENTIDEM_") || strings.HasPrefix(e.Setting, "TEST_") {
		return fmt.Sprintf("%s=%q: %s", e.Setting, e.Value, e.Want)
	}
	if e.Value == "" && strings.HasSuffix(e.Setting, ".go") { // a generated file (stale.go)
		return e.Setting + ": " + e.Want
	}
	if e.Value == "nil" && !strings.Contains(e.Setting, "=") { // an option given nil (nilOption)
		if name, ok := strings.CutSuffix(e.Setting, ")"); ok { // Invariant("one refund")
			return fmt.Sprintf("%s, nil): %s", name, e.Want)
		}
		return fmt.Sprintf("%s(nil): %s", e.Setting, e.Want)
	}
	if e.Setting == "ShardOf" { // its Value is the two numbers: ShardOf(0, 2)
		return fmt.Sprintf("%s(%s): %s", e.Setting, e.Value, e.Want)
	}
	return fmt.Sprintf("%s(%q): %s", e.Setting, e.Value, e.Want)
}

// checkSelection returns a *ConfigError when the scenario OnlyScenario or
// AGENTIDEM_SCENARIO selects is none of the suite's, once the baseline
// passed (the fault scenarios are planned from it). The suite's scenarios
// are its baseline, its planned fault scenarios and, for an agent with
// parallel calls, its partial batch failures and its interleavings
// ("interleaving", which runs them all as any selection does, or
// "interleaving/<schedule>", the name a replay line gives one). The error
// names the closest of them.
func (s *Suite) checkSelection(ctx context.Context) error {
	only := s.cfg.only
	if only == "" || only == ScenarioBaseline {
		return nil
	}
	names := []string{ScenarioBaseline}
	for _, sc := range s.plan() {
		names = append(names, sc.Name)
	}
	if s.Parallel(ctx) {
		for _, sc := range s.PartialBatchPlan() {
			names = append(names, sc.Name)
		}
		names = append(names, ScenarioInterleaving)
		if rest, ok := strings.CutPrefix(only, ScenarioInterleaving+"/"); ok {
			if _, err := ParseSchedule(rest); err == nil && strings.TrimSpace(rest) != "" && rest != "serial" {
				return nil
			}
		}
	}
	if slices.Contains(names, only) {
		return nil
	}
	if _, target, ok := strings.Cut(only, "/"); ok && s.BaselineOK() {
		if same, _ := sameCalls(s.base); same[target] != "" {
			return &ConfigError{Setting: s.cfg.onlyFrom, Value: only, Want: "names no scenario of this suite: " + same[target]}
		}
	}
	if kind, target, ok := strings.Cut(only, "/"); ok && followsSuccess(FaultKind(kind)) {
		if targets, notes := s.notPlanned(); slices.Contains(targets, target) {
			return &ConfigError{Setting: s.cfg.onlyFrom, Value: only, Want: "names no scenario of this suite: " + notes[slices.Index(targets, target)]}
		}
	}
	return &ConfigError{Setting: s.cfg.onlyFrom, Value: only, Want: noScenario(only, names)}
}

// noScenario says that name is none of names, the suite's scenarios: the
// closest one when it is close enough to be a misspelling, and the first
// few of them, closest first.
func noScenario(name string, names []string) string {
	const shown = 6
	dist := make(map[string]int, len(names))
	for _, n := range names {
		dist[n] = editdist.Distance(name, n)
	}
	byCloseness := slices.Clone(names)
	slices.SortStableFunc(byCloseness, func(a, b string) int { return dist[a] - dist[b] })
	var b strings.Builder
	b.WriteString("names no scenario of this suite")
	if best := byCloseness[0]; dist[best] <= max(2, len([]rune(name))/5) {
		fmt.Fprintf(&b, " (did you mean %s?)", best)
	}
	b.WriteString("; its scenarios, closest first: " + strings.Join(byCloseness[:min(shown, len(byCloseness))], ", "))
	if len(byCloseness) > shown {
		fmt.Fprintf(&b, " and %d more", len(byCloseness)-shown)
	}
	if slices.Contains(names, ScenarioInterleaving) {
		b.WriteString(", and interleaving/<schedule> for one of its schedules")
	}
	b.WriteString("; give a scenario's full name, as its replay line prints it")
	return b.String()
}

// readEnv reads the AGENTIDEM_* variables that set what no option set:
// AGENTIDEM_SEED (Seed), AGENTIDEM_STALL_TIMEOUT (StallTimeout) and
// AGENTIDEM_SCHEDULE (Replay), and checks AGENTIDEM_GC, which gcPaceUp
// reads. (AGENTIDEM_SCENARIO is read before the options, which override
// it, and checked once the baseline ran, checkSelection; AGENTIDEM_SHARD
// and Bazel's TEST_TOTAL_SHARDS and TEST_SHARD_INDEX are checked here and
// taken where the exploration starts, shardDefaults.) A value that does not
// parse is a *ConfigError in c.envErr, which stops the suite before its
// baseline: each of them used to be ignored, and the suite ran with the
// default in its place.
func (c *config) readEnv() {
	errs := slices.Clone(c.optErrs)
	bad := func(name, value, want string) {
		errs = append(errs, &ConfigError{Setting: name, Value: value, Want: want})
	}
	if v := os.Getenv("AGENTIDEM_SEED"); v != "" && !c.seedSet {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil {
			bad("AGENTIDEM_SEED", v, "want a whole number, the seed of the PCT sampler (AGENTIDEM_SEED=2)")
		} else {
			c.seed, c.seedSet, c.seedEnv = n, true, true
		}
	}
	if v := os.Getenv("AGENTIDEM_STALL_TIMEOUT"); v != "" && c.stall <= 0 {
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			bad("AGENTIDEM_STALL_TIMEOUT", v, "want a positive duration with its unit, as time.ParseDuration reads it (AGENTIDEM_STALL_TIMEOUT=30s, 2m)")
		} else {
			c.stallEnv = d
		}
	}
	if v := os.Getenv("AGENTIDEM_SCHEDULE"); v != "" && c.replaySchedule == "" {
		if _, err := ParseSchedule(v); err != nil || strings.TrimSpace(v) == "" {
			want := "want a schedule as a replay line prints it (AGENTIDEM_SCHEDULE='s0s1f0f1', rounds joined by a dot)"
			if err != nil {
				want += ": " + err.Error()
			}
			bad("AGENTIDEM_SCHEDULE", v, want)
		} else {
			c.replaySchedule = v
		}
	}
	if v := os.Getenv("AGENTIDEM_GC"); v != "" && v != "default" {
		bad("AGENTIDEM_GC", v, "want default, which leaves the garbage collector's pacing as it is while suites run, or no value")
	}
	switch {
	case c.shardErr != nil:
		// A ShardOf out of range. Only the exploration of parallel calls
		// read it, so an agent without them ran the whole suite and passed
		// with ShardOf(0, 2) (fS), where AGENTIDEM_SHARD=x already failed.
		errs = append(errs, c.shardErr)
	case c.shard == nil: // ShardOf, where given, wins
		if _, _, err := shardFromEnv(); err != nil {
			errs = append(errs, err)
		}
	}
	c.envErr = errors.Join(errs...)
}
