package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Sharding splits the schedule exploration of one suite across processes
// (machines of a CI matrix, Bazel test shards). Every shard runs the
// baseline, the fault scenarios and the listed schedule's pre-flight; the
// schedules are then planned from the shapes of the listed schedule's
// rounds, exactly as one unsharded exploration would choose them (the same
// depth-first order or the same seeded PCT draws, the same budget), and the
// k-th distinct planned schedule (from 0) runs on shard k mod n. The union
// of the shards' schedules is the unsharded exploration's whenever the
// agent's rounds do not change with the order of its calls (the common
// case); a shard that sees them change says so (Shard.Diverged).
//
// A shard is chosen by the Shard option, by AGENTIDEM_SHARD=i/n (1 <= i <=
// n, as in a CI matrix), or by Bazel's TEST_TOTAL_SHARDS and
// TEST_SHARD_INDEX (from 0), in that order; under Bazel the file named by
// TEST_SHARD_STATUS_FILE is touched, telling Bazel the test shards.
// agentidem-gen report --merge joins the shards' reports into one.

// Shard says which part of a sharded exploration a report holds.
type Shard struct {
	// Index is the shard, from 1; 0 in a merged report.
	Index int `json:"index"`
	// Total is the number of shards.
	Total int `json:"total"`
	// Source names what chose the shard: "option", "AGENTIDEM_SHARD" or
	// "TEST_TOTAL_SHARDS" (Bazel).
	Source string `json:"source,omitempty"`
	// Planned is the number of distinct schedules of the whole
	// exploration; Ran how many of them this shard ran (in a merged
	// report, all shards).
	Planned int `json:"planned"`
	Ran     int `json:"ran"`
	// Diverged counts the schedules whose rounds differed from the plan
	// (the agent's parallel calls changed with their order): the union
	// of the shards may then differ from one unsharded exploration.
	Diverged int `json:"diverged,omitempty"`
	// Merged lists the shards a merged report joins.
	Merged []int `json:"merged,omitempty"`
}

// String says which part the shard ran.
func (s *Shard) String() string {
	if s == nil {
		return ""
	}
	if s.Index == 0 {
		return fmt.Sprintf("merged from shards %s of %d: %d of the %s ran", joinInts(s.Merged), s.Total, s.Ran, countNoun(s.Planned, "planned schedule"))
	}
	msg := fmt.Sprintf("shard %d of %d: ran %d of the %s (planned schedule k, from 0, runs on shard k mod %d + 1)", s.Index, s.Total, s.Ran, countNoun(s.Planned, "planned schedule"), s.Total)
	if s.Diverged > 0 {
		msg += fmt.Sprintf("; %s did not follow the plan (the agent's parallel calls changed with their order), so the shards together may differ from one unsharded exploration", countNoun(s.Diverged, "schedule"))
	}
	return msg
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

// ShardOf makes the suite run shard index (from 1) of total shards of its
// schedule exploration; it overrides AGENTIDEM_SHARD and Bazel's variables.
// An index or total out of range is a *ConfigError that stops the suite
// before its baseline, as a malformed AGENTIDEM_SHARD does, for an agent
// without parallel calls too (readEnv).
func ShardOf(index, total int) Option {
	return optionFunc(func(c *config) {
		c.shard, c.shardErr = &Shard{Index: index, Total: total, Source: "option"}, nil
		if total < 1 || index < 1 || index > total {
			c.shardErr = &ConfigError{Setting: "ShardOf", Value: fmt.Sprintf("%d, %d", index, total), Want: "want 1 <= index <= total (ShardOf(2, 4) runs the second of four shards)"}
		}
	})
}

// shardDefaults reads the shard from the environment when no option chose
// one. A malformed setting, or AGENTIDEM_SHARD and Bazel's variables that
// name different shards, is an error of the exploration, never a silent
// whole run or a silent wrong part; readEnv found it already, for every
// suite, and it stopped the suite before its baseline.
func (c *config) shardDefaults() {
	if c.shard != nil || c.shardErr != nil {
		return
	}
	own, bazel, err := shardFromEnv()
	if err != nil {
		c.shardErr = err
		return
	}
	if bazel != nil {
		if f := os.Getenv("TEST_SHARD_STATUS_FILE"); f != "" {
			// Bazel asks the test to touch the file to say it shards.
			if fh, err := os.OpenFile(f, os.O_CREATE|os.O_WRONLY, 0o666); err == nil {
				fh.Close()
			} else {
				c.shardErr = fmt.Errorf("touching TEST_SHARD_STATUS_FILE: %w", err)
				return
			}
		}
	}
	if own != nil {
		c.shard = own
	} else {
		c.shard = bazel
	}
}

// shardFromEnv reads the shards that AGENTIDEM_SHARD and Bazel's
// TEST_TOTAL_SHARDS and TEST_SHARD_INDEX name, nil where unset. A value
// that does not parse, or the two naming different shards, is a
// *ConfigError. readEnv checks them for every suite, an agent's without
// parallel calls too, which explores nothing: before, there a bad value
// was read nowhere and passed in silence (AGENTIDEM_SHARD=x, red team rtO
// item 8), where the README says it fails the test.
func shardFromEnv() (own, bazel *Shard, err error) {
	if v := os.Getenv("AGENTIDEM_SHARD"); v != "" {
		i, n, ok := parseShard(v)
		if !ok {
			return nil, nil, &ConfigError{Setting: "AGENTIDEM_SHARD", Value: v, Want: "want i/n with 1 <= i <= n (AGENTIDEM_SHARD=2/4 runs the second of four shards)"}
		}
		own = &Shard{Index: i, Total: n, Source: "AGENTIDEM_SHARD"}
	}
	total, index := os.Getenv("TEST_TOTAL_SHARDS"), os.Getenv("TEST_SHARD_INDEX")
	if total != "" {
		n, err := strconv.Atoi(total)
		if err != nil || n < 1 {
			return nil, nil, &ConfigError{Setting: "TEST_TOTAL_SHARDS", Value: total, Want: "want the number of Bazel's shards, a whole number from 1"}
		}
		i, err := strconv.Atoi(index)
		if err != nil || i < 0 || i >= n {
			return nil, nil, &ConfigError{Setting: "TEST_SHARD_INDEX", Value: index, Want: fmt.Sprintf("want Bazel's shard index, a whole number from 0 to %d with TEST_TOTAL_SHARDS=%d", n-1, n)}
		}
		bazel = &Shard{Index: i + 1, Total: n, Source: "TEST_TOTAL_SHARDS"}
	}
	if own != nil && bazel != nil && (own.Index != bazel.Index || own.Total != bazel.Total) {
		// Either one alone would leave the other's shards unrun: every
		// process of a Bazel test running shard 1/2 of AGENTIDEM_SHARD.
		return nil, nil, &ConfigError{Setting: "AGENTIDEM_SHARD", Value: os.Getenv("AGENTIDEM_SHARD"),
			Want: fmt.Sprintf("it and TEST_TOTAL_SHARDS=%q, TEST_SHARD_INDEX=%q (shard %d/%d) name different shards: set one of them", total, index, bazel.Index, bazel.Total)}
	}
	return own, bazel, nil
}

func parseShard(v string) (i, n int, ok bool) {
	a, b, found := strings.Cut(strings.TrimSpace(v), "/")
	if !found {
		return 0, 0, false
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, false
	}
	return i, n, true
}

// sharded reports whether the exploration is split (more than one shard).
func (c *config) sharded() bool { return c.shard != nil && c.shard.Total > 1 }

// planSchedules lists, each once and in the order it would run them, the
// schedules an unsharded exploration runs, predicted from the shapes of the
// listed schedule's rounds: the listed order, its reverse, then depth-first
// (exhaustive) or seeded PCT until the budget of distinct schedules.
func planSchedules(shapes []roundShape, exhaustive bool, budget, depth int, seed int64) []Schedule {
	var plan []Schedule
	seen := map[string]bool{}
	tries := 0
	add := func(choose chooser) bool {
		var sc Schedule
		for r, sh := range shapes {
			order, err := choose(r, sh)
			if err != nil {
				return false
			}
			sc.Rounds = append(sc.Rounds, order)
		}
		tries++
		if name := sc.String(); !seen[name] {
			seen[name] = true
			plan = append(plan, sc)
		}
		return true
	}
	add(prefixChooser(nil))
	if tries < budget {
		add(reverseChooser())
	}
	if exhaustive {
		for choices := next(nil, shapes); choices != nil && len(seen) < budget; choices = next(choices, shapes) {
			if !add(prefixChooser(choices)) {
				break
			}
		}
		return plan
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x61676e74))
	for t := 0; len(seen) < budget && t < 4*budget; t++ {
		add(pctChooser(rng, depth))
	}
	return plan
}

// plannedChooser follows a planned schedule while the agent's rounds are
// the predicted ones; a round that differs is run in its listed order and
// counted in *diverged.
func plannedChooser(plan Schedule, shapes []roundShape, diverged *bool) chooser {
	return func(round int, shape roundShape) ([]Step, error) {
		if round < len(plan.Rounds) && round < len(shapes) && slices.Equal(shapes[round].labels, shape.labels) {
			return plan.Rounds[round], nil
		}
		*diverged = true
		return shape.order(0), nil
	}
}

// exploreShard runs this shard's part of the planned exploration.
func (s *Suite) exploreShard(ctx context.Context, ex *Exploration, shapes []roundShape, exhaustive bool, each func(*Result)) []error {
	plan := planSchedules(shapes, exhaustive, s.cfg.budget, s.cfg.depth, s.cfg.seed)
	sh := *s.cfg.shard
	sh.Planned = len(plan)
	ex.Shard = &sh
	ex.Strategy = "pct"
	if exhaustive {
		ex.Strategy = "exhaustive"
	}
	var errs []error
	seen := map[string]bool{}
	for k := sh.Index - 1; k < len(plan); k += sh.Total {
		diverged := false
		res, sch, err := s.scheduled(ctx, plannedChooser(plan[k], shapes, &diverged), s.bubble(), false)
		ex.Explored++
		sh.Ran++
		if diverged || res.Schedule != plan[k].String() {
			sh.Diverged++
		}
		if !seen[res.Scenario] {
			seen[res.Scenario] = true
			s.record(res, each)
		}
		if err != nil {
			errs = append(errs, err)
			break
		}
		// The eager twin of the schedule, as Interleavings runs it
		// right after it: its chooser depends only on this run.
		if sch.sawReady {
			res, sch, err := s.scheduled(ctx, eagerChooser(sch), s.bubble(), true)
			if sch.eagerPlays > 0 || err != nil || res.Inconclusive {
				ex.Explored++
				ex.eager++
				if !seen[res.Scenario] {
					seen[res.Scenario] = true
					s.record(res, each)
				}
			}
			if err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	ex.Shard = &sh
	s.shardRan = &sh
	return errs
}

// shardPart is the Shard of the suite's report: what this shard explored,
// or only which shard it is when nothing was explored.
func (s *Suite) shardPart() *Shard {
	if s.shardRan != nil {
		sh := *s.shardRan
		return &sh
	}
	s.cfg.defaults()
	if !s.cfg.sharded() {
		return nil
	}
	sh := *s.cfg.shard
	return &sh
}

// MergeShards joins the reports of the shards of one suite into the report
// one unsharded run would have written: the baseline and the fault
// scenarios once (every shard runs them; of a scenario that did not end
// alike in every shard, the worst copy is kept and a note says so; else
// the first shard's), the notes of every shard (each once), the
// schedules of all shards in the order the exploration planned them, order
// findings once per problem, order_variant_outcome judged across all
// schedules, and the counts and verdict recomputed. Duration is the
// slowest shard's (shards run side by side); AgentRuns sums the shards.
// The reports must be of one suite (name and seed), with one report for
// each shard of the same total.
func MergeShards(reps ...*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("merging shards: no report")
	}
	byIndex := make([]*Report, 0, len(reps))
	total := 0
	for _, r := range reps {
		if r.Shard == nil || r.Shard.Index == 0 {
			return nil, fmt.Errorf("merging shards: report %s is not a shard's (no shard field, or already merged)", r.Name)
		}
		if total == 0 {
			total = r.Shard.Total
		}
		switch {
		case r.Name != reps[0].Name:
			return nil, fmt.Errorf("merging shards: reports of two suites, %s and %s", reps[0].Name, r.Name)
		case r.Seed != reps[0].Seed:
			return nil, fmt.Errorf("merging shards: %s was explored with seed %d and %d; shards must share the seed", r.Name, reps[0].Seed, r.Seed)
		case r.Shard.Total != total:
			return nil, fmt.Errorf("merging shards: %s was split in %d and in %d shards", r.Name, total, r.Shard.Total)
		}
		if why := otherSuite(reps[0], r); why != "" {
			// Two tests of one name in two packages, or the agent changed
			// between the shards' runs: merged, the report mixed the
			// scenarios of both (a red team's merge, exit status 0).
			return nil, fmt.Errorf("merging shards: the reports of shard %d/%d and %d/%d of %s are not of one suite: %s", reps[0].Shard.Index, total, r.Shard.Index, total, r.Name, why)
		}
		byIndex = append(byIndex, r)
	}
	slices.SortFunc(byIndex, func(a, b *Report) int { return a.Shard.Index - b.Shard.Index })
	var missing []int
	for i, want := 0, 1; want <= total; want++ {
		if i < len(byIndex) && byIndex[i].Shard.Index == want {
			i++
			if i < len(byIndex) && byIndex[i].Shard.Index == want {
				return nil, fmt.Errorf("merging shards: two reports of shard %d/%d of %s", want, total, byIndex[0].Name)
			}
			continue
		}
		missing = append(missing, want)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("merging shards: shard %s of %d of %s missing", joinInts(missing), total, byIndex[0].Name)
	}

	first := byIndex[0]
	out := &Report{
		SchemaVersion: first.SchemaVersion, Name: first.Name, Seed: first.Seed,
		BaselineSucceeded: first.BaselineSucceeded, BaselineFailure: first.BaselineFailure,
		Baseline: first.Baseline, StartedAt: first.StartedAt, Findings: []Finding{},
		Shard: &Shard{Total: total, Planned: first.Shard.Planned},
	}
	// Every shard's notes, each once, in shard order: the first shard's
	// alone were kept, and a note only shard 2 wrote (its retry counts,
	// say) was lost from the merged report (fS).
	noted := map[string]bool{}
	for _, r := range byIndex {
		for _, n := range r.Notes {
			if !noted[n] {
				noted[n] = true
				out.Notes = append(out.Notes, n)
			}
		}
	}
	// The baseline every shard ran: the worst copy, with its verdict.
	if b, i, note := worstCopy("the baseline", byIndex, func(r *Report) *Result { return r.Baseline }); b != nil {
		out.Baseline, out.BaselineSucceeded, out.BaselineFailure = b, byIndex[i].BaselineSucceeded, byIndex[i].BaselineFailure
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
	}
	// The schedules, dealt round-robin by the plan, are dealt back, each
	// with the eager twin that ran right after it (exploreShard).
	scheduled := make([][][]*Result, len(byIndex))
	for i, r := range byIndex {
		out.Shard.Merged = append(out.Shard.Merged, r.Shard.Index)
		out.Shard.Ran += r.Shard.Ran
		out.Shard.Diverged += r.Shard.Diverged
		out.AgentRuns += r.AgentRuns
		out.Duration = max(out.Duration, r.Duration)
		if r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		for _, res := range r.Results {
			if res.Kind != ScenarioInterleaving {
				continue
			}
			if n := len(scheduled[i]); n > 0 && strings.HasPrefix(res.Scenario, ScenarioInterleaving+"/"+eagerPrefix) {
				scheduled[i][n-1] = append(scheduled[i][n-1], cloneResult(res))
				continue
			}
			scheduled[i] = append(scheduled[i], []*Result{cloneResult(res)})
		}
	}
	var merged []*Result
	twins := map[string]bool{} // two shards' schedules may have one twin: listed once
	for k := 0; ; k++ {
		more := false
		for i := range scheduled {
			if k >= len(scheduled[i]) {
				continue
			}
			more = true
			for _, res := range scheduled[i][k] {
				if strings.HasPrefix(res.Scenario, ScenarioInterleaving+"/"+eagerPrefix) {
					if twins[res.Scenario] {
						continue
					}
					twins[res.Scenario] = true
				}
				merged = append(merged, res)
			}
		}
		if !more {
			break
		}
	}
	// Ordering findings stay in every schedule that shows them, and the
	// outcomes are compared across all of them, as one exploration does
	// (Suite.record).
	for _, res := range merged {
		kept := res.Findings[:0]
		for _, f := range res.Findings {
			if f.Code != CodeOrderVariantOutcome {
				kept = append(kept, f)
			}
		}
		res.Findings = kept
	}
	hasOutcome := false
	for _, res := range merged {
		hasOutcome = hasOutcome || res.Outcome != ""
	}
	if hasOutcome {
		variantOutcome(merged, outcomesAlike) // the ends are not in the reports
	}
	for _, res := range merged {
		res.Safe = !res.Inconclusive
		for _, f := range res.Findings {
			if f.Severity == SeverityError {
				res.Safe = false
			}
		}
	}
	// Fault scenarios before the schedules, partial batches after, as one
	// run orders them; each once.
	seen := map[string]bool{}
	placed := false
	for _, r := range byIndex {
		for _, res := range r.Results {
			if res.Kind == ScenarioInterleaving {
				if !placed {
					out.Results = append(out.Results, merged...)
					placed = true
				}
				continue
			}
			if seen[res.Scenario] {
				continue
			}
			seen[res.Scenario] = true
			name := res.Scenario
			kept, _, note := worstCopy(name, byIndex, func(r *Report) *Result {
				for _, x := range r.Results {
					if x.Scenario == name {
						return x
					}
				}
				return nil
			})
			if note != "" {
				out.Notes = append(out.Notes, note)
			}
			out.Results = append(out.Results, kept)
		}
	}
	if !placed {
		out.Results = append(out.Results, merged...)
	}
	out.tally()
	return out, nil
}

// worstCopy picks, of the copies of one scenario that every shard runs
// (the baseline, a fault scenario, a partial batch failure), the one to
// keep: the first shard's, unless another's is worse (an error finding,
// then inconclusive, then a failed agent, then more findings, then more
// notes). Before, the first shard's was kept whatever the others said, so
// a duplicate_write or an inconclusive scenario that only shard 2 saw (an
// agent whose fault scenarios do not end alike on every run) was lost
// from the merged report, which then passed (fS). It returns the kept
// copy, the index of its shard, and a note when the copies' verdicts or
// finding codes differ.
func worstCopy(name string, shards []*Report, of func(*Report) *Result) (*Result, int, string) {
	var kept *Result
	at := -1
	for i, r := range shards {
		if c := of(r); c != nil && (kept == nil || slices.Compare(harm(c), harm(kept)) > 0) {
			kept, at = c, i
		}
	}
	if kept == nil {
		return nil, -1, ""
	}
	var told []string
	alike := true
	for _, r := range shards {
		c := of(r)
		if c == nil {
			continue
		}
		alike = alike && verdictOf(c) == verdictOf(kept)
		told = append(told, fmt.Sprintf("shard %d: %s", r.Shard.Index, verdictOf(c)))
	}
	if alike {
		return kept, at, ""
	}
	return kept, at, fmt.Sprintf("%s did not end alike in every shard (%s): the merged report keeps shard %d's; every shard runs it, so its verdict varies from run to run", name, strings.Join(told, "; "), shards[at].Shard.Index)
}

// harm ranks a copy of a scenario for worstCopy, greater being worse.
func harm(r *Result) []int {
	errs := 0
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			errs = 1
		}
	}
	notes := 0
	if r.Trace != nil {
		notes = len(r.Trace.Notes)
	}
	return []int{errs, b2i(r.Inconclusive), b2i(r.Failed), len(r.Findings), notes}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// verdictOf says how a copy of a scenario ended, for worstCopy's note:
// "unsafe (duplicate_write)", "inconclusive", "safe".
func verdictOf(r *Result) string {
	var codes []string
	for _, f := range r.Findings {
		if !slices.Contains(codes, f.Code) {
			codes = append(codes, f.Code)
		}
	}
	v := "safe"
	switch {
	case slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Severity == SeverityError }):
		v = "unsafe"
	case r.Inconclusive:
		v = "inconclusive"
	}
	if len(codes) > 0 {
		v += " (" + strings.Join(codes, ", ") + ")"
	}
	return v
}

// cloneResult copies a result and its findings, so that merging never
// changes the shards' reports.
func cloneResult(r *Result) *Result {
	c := *r
	c.Findings = append([]Finding(nil), r.Findings...)
	return &c
}

// shardEnv is what a replay line of an interleaving this shard ran sets
// first, "AGENTIDEM_SHARD=2/2 ", where the shard came from the
// environment: the exploration keeps an ordering finding at the first
// schedule that shows it, which in a shard is often one that an unsharded
// run passes after the finding was kept at an earlier one, so that the
// line's -run pattern, run without the shard, passed (a red team's
// replay). With ShardOf the test sets its shard itself.
func (s *Suite) shardEnv() string {
	if sh := s.cfg.shard; sh != nil && s.cfg.shardErr == nil && sh.Source != "option" && sh.Total > 1 {
		return fmt.Sprintf("AGENTIDEM_SHARD=%d/%d ", sh.Index, sh.Total)
	}
	return ""
}

// otherSuite says why two shards' reports are not of one suite, or "":
// every shard runs the baseline and every fault scenario, and plans the
// same schedules, so the replay line of the baseline (which names the
// test's package), the fault scenarios and the planned schedules agree.
func otherSuite(a, b *Report) string {
	if a.Baseline != nil && b.Baseline != nil && a.Baseline.Replay != b.Baseline.Replay {
		return fmt.Sprintf("their baselines replay as %q and %q", a.Baseline.Replay, b.Baseline.Replay)
	}
	if a.Shard.Planned != b.Shard.Planned {
		return fmt.Sprintf("one planned %s, the other %d", countNoun(a.Shard.Planned, "schedule"), b.Shard.Planned)
	}
	faults := func(r *Report) []string {
		var ids []string
		for _, res := range r.Results {
			if res.Kind != ScenarioInterleaving {
				ids = append(ids, res.Scenario)
			}
		}
		return ids
	}
	if fa, fb := faults(a), faults(b); !slices.Equal(fa, fb) {
		return fmt.Sprintf("their fault scenarios differ (%d and %d, the first difference %s)", len(fa), len(fb), firstDifference(fa, fb))
	}
	return ""
}

func firstDifference(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%s against %s", a[i], b[i])
		}
	}
	if len(a) > len(b) {
		return a[len(b)] + " in the first only"
	}
	return b[len(a)] + " in the second only"
}
