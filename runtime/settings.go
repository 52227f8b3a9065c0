package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// ConfigError is a setting the suite cannot run as asked: a scenario
// selection (OnlyScenario, AGENTIDEM_SCENARIO) that names none of the
// suite's scenarios. Falling back would run another suite than the one
// asked for and call it safe: a misspelled scenario ran the baseline alone
// and reported SAFE. So Baseline returns the error and the suite runs
// nothing more (Run returns it too), the report counts the selection as a
// scenario that did not run, and testkit fails the test with it, whatever
// -run selects.
type ConfigError struct {
	// Setting is what was set: an environment variable
	// ("AGENTIDEM_SCENARIO") or an option ("OnlyScenario").
	Setting string
	// Value is the value it was given.
	Value string
	// Want says what the setting takes, or why the value fits nothing.
	Want string
}

func (e *ConfigError) Error() string {
	if strings.HasPrefix(e.Setting, "AGENTIDEM_") {
		return fmt.Sprintf("%s=%q: %s", e.Setting, e.Value, e.Want)
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
	return &ConfigError{Setting: s.cfg.onlyFrom, Value: only, Want: noScenario(only, names)}
}

// noScenario says that name is none of names, the suite's scenarios: the
// closest one when it is close enough to be a misspelling, and the first
// few of them, closest first.
func noScenario(name string, names []string) string {
	const shown = 6
	dist := make(map[string]int, len(names))
	for _, n := range names {
		dist[n] = editDistance(name, n)
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

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
