package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fanWorld is n parallel writes to one entity; the outcome is the order
// they landed in, so it differs between schedules.
type fanWorld struct {
	mu    sync.Mutex
	order []string
}

var fanOps = []*Op{
	{Name: "w1", Kind: KindWrite, Params: []string{"v"}},
	{Name: "w2", Kind: KindWrite, Params: []string{"v"}},
	{Name: "w3", Kind: KindWrite, Params: []string{"v"}},
	{Name: "w4", Kind: KindWrite, Params: []string{"v"}},
	{Name: "w5", Kind: KindWrite, Params: []string{"v"}},
}

func (w *fanWorld) write(ctx context.Context, op *Op) (aiErr error) {
	aiCall, _ := Begin(ctx, op, []any{op.Name}, []any{op.Name}, []any{"entity"})
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	w.mu.Lock()
	w.order = append(w.order, op.Name)
	w.mu.Unlock()
	return aiCall.Finish(nil)
}

func (w *fanWorld) agent(ctx context.Context, n int) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, op := range fanOps[:n] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.write(ctx, op)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fanRun runs the fan-out agent's suite with opts.
func fanRun(t *testing.T, n int, opts ...Option) *Report {
	t.Helper()
	var w *fanWorld
	opts = append([]Option{
		Setup(func(context.Context) error { w = &fanWorld{}; return nil }),
		Outcome(func() any { return w.order }),
	}, opts...)
	rep, err := Run(context.Background(), "fan", func(ctx context.Context) error { return w.agent(ctx, n) }, opts...)
	require.NoError(t, err)
	return rep
}

func schedulesOf(rep *Report) []string {
	var out []string
	for _, r := range rep.Results {
		if r.Kind == ScenarioInterleaving {
			out = append(out, r.Schedule)
		}
	}
	return out
}

// TestShardsUnionIsTheExploration runs one exploration unsharded and split
// in 2 and 3 shards, depth-first (three writes: 90 orders) and by PCT (five
// writes, a budget of 40): the shards' schedules are disjoint, their union
// is the unsharded exploration's, and the merged report lists them in the
// same order with the same verdict and findings.
func TestShardsUnionIsTheExploration(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the exploration six times")
	}
	for _, tc := range []struct {
		name   string
		writes int
		opts   []Option
	}{
		{"exhaustive", 3, nil},
		{"pct", 5, []Option{Schedules(40), Seed(7)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole := fanRun(t, tc.writes, tc.opts...)
			want := schedulesOf(whole)
			require.NotEmpty(t, want)
			assert.Nil(t, whole.Shard, "an unsharded report has no shard field")
			for _, n := range []int{2, 3} {
				var reps []*Report
				union := map[string]int{}
				for i := 1; i <= n; i++ {
					rep := fanRun(t, tc.writes, append(tc.opts, ShardOf(i, n))...)
					require.NotNil(t, rep.Shard)
					assert.Equal(t, i, rep.Shard.Index)
					assert.Equal(t, n, rep.Shard.Total)
					assert.Equal(t, len(want), rep.Shard.Planned, "every shard plans the whole exploration")
					assert.Zero(t, rep.Shard.Diverged)
					got := schedulesOf(rep)
					assert.Equal(t, len(got), rep.Shard.Ran)
					for _, s := range got {
						union[s]++
					}
					reps = append(reps, rep)
				}
				assert.Len(t, union, len(want), "%d shards", n)
				for _, s := range want {
					assert.Equal(t, 1, union[s], "schedule %s in %d of %d shards", s, union[s], n)
				}
				merged, err := MergeShards(reps[1:]...)
				assert.ErrorContains(t, err, "shard 1 of")
				assert.Nil(t, merged)
				merged, err = MergeShards(reps...)
				require.NoError(t, err)
				assert.Equal(t, want, schedulesOf(merged), "merged in the planned order")
				assert.Equal(t, whole.Safe, merged.Safe)
				assert.Equal(t, whole.FaultCount, merged.FaultCount)
				assert.Equal(t, whole.UnsafeCount, merged.UnsafeCount)
				// The schedules' findings; the fault scenarios' are runs of
				// their own (a concurrent duplicate delivery may land either
				// way on real time).
				assert.Equal(t, orderFindings(whole), orderFindings(merged))
				assert.Equal(t, len(want), merged.Shard.Ran)
			}
		})
	}
}

// orderFindings lists the findings of the interleaving scenarios, by
// scenario, code, ops and identities.
func orderFindings(r *Report) []string {
	var out []string
	for _, res := range r.Results {
		if res.Kind != ScenarioInterleaving {
			continue
		}
		for _, f := range res.Findings {
			out = append(out, res.Schedule+" "+f.Code+" "+strings.Join(f.Ops, ",")+" "+strings.Join(f.Identities, ","))
		}
	}
	return out
}

func TestShardFromEnvironment(t *testing.T) {
	t.Setenv("AGENTIDEM_SHARD", "2/3")
	c := newConfig(nil)
	c.defaults()
	require.NoError(t, c.shardErr)
	assert.Equal(t, &Shard{Index: 2, Total: 3, Source: "AGENTIDEM_SHARD"}, c.shard)

	for _, bad := range []string{"0/3", "4/3", "2", "a/b", "1/0"} {
		t.Setenv("AGENTIDEM_SHARD", bad)
		c := newConfig(nil)
		c.defaults()
		assert.ErrorContains(t, c.shardErr, "AGENTIDEM_SHARD", bad)
		assert.Nil(t, c.shard)
	}

	t.Setenv("AGENTIDEM_SHARD", "")
	status := filepath.Join(t.TempDir(), "status")
	t.Setenv("TEST_TOTAL_SHARDS", "4")
	t.Setenv("TEST_SHARD_INDEX", "0")
	t.Setenv("TEST_SHARD_STATUS_FILE", status)
	c = newConfig(nil)
	c.defaults()
	require.NoError(t, c.shardErr)
	assert.Equal(t, &Shard{Index: 1, Total: 4, Source: "TEST_TOTAL_SHARDS"}, c.shard)
	_, err := os.Stat(status)
	assert.NoError(t, err, "Bazel's shard status file is touched")

	c = newConfig([]Option{ShardOf(3, 4)})
	c.defaults()
	assert.Equal(t, "option", c.shard.Source, "the option wins over the environment")

	t.Setenv("TEST_SHARD_INDEX", "4")
	c = newConfig(nil)
	c.defaults()
	assert.ErrorContains(t, c.shardErr, "TEST_SHARD_INDEX")

	// Both set: where they name one shard it runs, and Bazel's status
	// file is touched; where they differ, neither wins silently (before,
	// AGENTIDEM_SHARD did, every Bazel shard ran its part, half the
	// schedules ran nowhere, and the status file was never touched).
	status2 := filepath.Join(t.TempDir(), "status2")
	t.Setenv("TEST_SHARD_STATUS_FILE", status2)
	t.Setenv("TEST_SHARD_INDEX", "1")
	t.Setenv("AGENTIDEM_SHARD", "2/4")
	c = newConfig(nil)
	c.defaults()
	require.NoError(t, c.shardErr)
	assert.Equal(t, &Shard{Index: 2, Total: 4, Source: "AGENTIDEM_SHARD"}, c.shard)
	_, err = os.Stat(status2)
	assert.NoError(t, err, "Bazel's shard status file is touched when both name one shard")
	for _, idx := range []string{"0", "2"} {
		t.Setenv("TEST_SHARD_INDEX", idx)
		c = newConfig(nil)
		c.defaults()
		assert.ErrorContains(t, c.shardErr, "name different shards", idx)
		assert.Nil(t, c.shard)
	}
	t.Setenv("TEST_TOTAL_SHARDS", "2")
	t.Setenv("TEST_SHARD_INDEX", "1")
	c = newConfig(nil)
	c.defaults()
	assert.ErrorContains(t, c.shardErr, "name different shards")
}

// An ordering finding of a shard's exploration is kept at the first
// schedule of that shard that shows it; run without the shard, the
// exploration keeps it at an earlier schedule, and the line's -run
// pattern, naming the shard's, passed. The replay line of a shard's
// interleaving sets the shard first.
func TestShardReplayLineSetsTheShard(t *testing.T) {
	var w *fanWorld
	run := func() *Report {
		rep, err := Run(context.Background(), "fan", func(ctx context.Context) error { return w.agent(ctx, 2) },
			Setup(func(context.Context) error { w = &fanWorld{}; return nil }))
		require.NoError(t, err)
		return rep
	}
	t.Setenv("AGENTIDEM_SHARD", "2/2")
	sharded := interleavingsOf(run())
	require.NotEmpty(t, sharded)
	for _, res := range sharded {
		assert.True(t, strings.HasPrefix(res.Replay, "AGENTIDEM_SHARD=2/2 "), res.Replay)
		for _, f := range res.Findings {
			assert.True(t, strings.HasPrefix(f.Replay, "AGENTIDEM_SHARD=2/2 "), f.Replay)
		}
	}
	t.Setenv("AGENTIDEM_SHARD", "")
	for _, res := range interleavingsOf(run()) {
		assert.False(t, strings.Contains(res.Replay, "AGENTIDEM_SHARD"), res.Replay)
	}
}

// A replay line of a schedule sets the seed first where the run took it
// from AGENTIDEM_SEED: which schedules PCT samples follows from the seed,
// and the line run without it selected a schedule the default seed's
// sample does not hold. With the Seed option the test sets its seed
// itself, and the line says nothing of it.
func TestReplayLineSetsTheSeedTakenFromTheEnvironment(t *testing.T) {
	t.Setenv("AGENTIDEM_SEED", "2")
	seeded := interleavingsOf(fanRun(t, 5, Schedules(12)))
	require.NotEmpty(t, seeded)
	for _, res := range seeded {
		assert.True(t, strings.HasPrefix(res.Replay, "AGENTIDEM_SEED=2 AGENTIDEM_SCENARIO="), res.Replay)
		for _, f := range res.Findings {
			assert.Equal(t, res.Replay, f.Replay)
		}
	}
	t.Setenv("AGENTIDEM_SEED", "")
	for _, res := range interleavingsOf(fanRun(t, 5, Schedules(12), Seed(2))) {
		assert.False(t, strings.Contains(res.Replay, "AGENTIDEM_SEED"), res.Replay)
	}
}

// TestBadShardIsAnError checks that a malformed shard stops the
// exploration with an error naming the variable, rather than running
// everything or nothing quietly.
func TestBadShardIsAnError(t *testing.T) {
	t.Setenv("AGENTIDEM_SHARD", "5/4")
	var w *fanWorld
	_, err := Run(context.Background(), "fan", func(ctx context.Context) error { return w.agent(ctx, 2) },
		Setup(func(context.Context) error { w = &fanWorld{}; return nil }))
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "AGENTIDEM_SHARD"), err.Error())
}

// Shards' reports of two suites of one name (a test of one name in two
// packages, an agent changed between the shards' runs) are refused: the
// merge compared the name, seed and shard count only, and mixed the
// scenarios of both into one report with exit status 0 (a red team's
// merge of two packages' TestParallel).
func TestMergeRefusesShardsOfTwoSuites(t *testing.T) {
	var w *fanWorld
	shard := func(calls, index int) *Report {
		rep, err := Run(context.Background(), "fan", func(ctx context.Context) error { return w.agent(ctx, calls) },
			Setup(func(context.Context) error { w = &fanWorld{}; return nil }), ShardOf(index, 2))
		require.NoError(t, err)
		return rep
	}
	one, two := shard(2, 1), shard(2, 2)
	_, err := MergeShards(one, two)
	require.NoError(t, err, "the shards of one suite merge")

	_, err = MergeShards(one, shard(3, 2))
	assert.ErrorContains(t, err, "not of one suite")

	other := shard(2, 2)
	other.Baseline.Replay = strings.Replace(other.Baseline.Replay, "baseline", "baseline' example.com/other", 1)
	_, err = MergeShards(one, other)
	assert.ErrorContains(t, err, "not of one suite")
	assert.ErrorContains(t, err, "their baselines replay as")
}

// interleavingsOf returns the interleaving scenarios of rep.
func interleavingsOf(rep *Report) []*Result {
	var out []*Result
	for _, res := range rep.Results {
		if res.Kind == ScenarioInterleaving {
			out = append(out, res)
		}
	}
	return out
}

// The merge keeps what any shard saw. Every shard runs the baseline and the
// fault scenarios; the merge kept the first shard's copies and the first
// shard's notes, so a duplicate_write that only shard 2's run of a fault
// scenario showed (an agent whose scenarios do not end alike on every run,
// here a retry that shard 2's run makes and shard 1's does not) and a note
// only shard 1 or 2 wrote were lost, and the merged report passed (fS).
// Now the worse copy is kept, with a note naming each shard's verdict, and
// every shard's notes are there, each once.
func TestMergeKeepsWhatAnyShardSaw(t *testing.T) {
	var (
		mu   sync.Mutex
		done map[string]int
	)
	keyed := true // shard 2's run writes without a key and retries
	write := func(ctx context.Context, op *Op) (aiErr error) {
		aiCall, aiCtx := Begin(ctx, op, []any{op.Name}, []any{op.Name}, []any{op.Name})
		if aiErr = aiCall.Start(); aiErr != nil {
			return
		}
		mu.Lock()
		if keyed && done[op.Name] > 0 {
			MarkReplayed(aiCtx)
		} else {
			done[op.Name]++
		}
		mu.Unlock()
		return aiCall.Finish(nil)
	}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, op := range fanOps[:2] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if errs[i] = write(ctx, op); errs[i] != nil && !keyed {
					errs[i] = write(ctx, op) // a lost acknowledgement's retry writes twice
				}
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	shard := func(index int) *Report {
		rep, err := Run(context.Background(), "keyed", agent,
			Setup(func(context.Context) error { done = map[string]int{}; return nil }), ShardOf(index, 2))
		require.NoError(t, err)
		return rep
	}
	one := shard(1)
	keyed = false
	two := shard(2)
	require.True(t, one.Safe, "shard 1's agent writes with a key: %v", one.Findings)
	require.False(t, two.Safe, "shard 2's writes twice")
	require.NotEmpty(t, one.Notes, "no injected fault was retried in shard 1")
	two.Notes = append(two.Notes, "a note only shard 2 wrote", one.Notes[0])

	for _, order := range [][]*Report{{one, two}, {two, one}} {
		merged, err := MergeShards(order...)
		require.NoError(t, err)
		assert.False(t, merged.Safe, "shard 2's duplicate is in the merged report")
		assert.True(t, merged.Has(CodeDuplicateWrite))
		for _, n := range one.Notes {
			assert.Equal(t, 1, countOf(merged.Notes, n), "shard 1's note %q, once", n)
		}
		assert.Equal(t, 1, countOf(merged.Notes, "a note only shard 2 wrote"))
		var told []string
		for _, n := range merged.Notes {
			if strings.Contains(n, "did not end alike in every shard") {
				told = append(told, n)
			}
		}
		require.NotEmpty(t, told, "the merged report says the shards disagreed")
		assert.Contains(t, told[0], "shard 1: safe; shard 2: unsafe (duplicate_write)")
		assert.Contains(t, told[0], "the merged report keeps shard 2's")
	}

	// Shards that agree merge without such a note, and an inconclusive
	// copy (shard 2's) is kept over a safe one, never passed.
	keyed = true
	two = shard(2)
	merged, err := MergeShards(one, two)
	require.NoError(t, err)
	assert.True(t, merged.Safe)
	for _, n := range merged.Notes {
		assert.NotContains(t, n, "did not end alike")
	}
	res := two.Results[0]
	res.Inconclusive, res.Safe = true, false
	res.Trace.Notes = append(res.Trace.Notes, "not judged in shard 2")
	merged, err = MergeShards(one, two)
	require.NoError(t, err)
	assert.True(t, merged.Results[0].Inconclusive, "shard 2's inconclusive copy of %s is kept", res.Scenario)
	assert.Equal(t, 1, merged.InconclusiveCount)
	assert.Equal(t, 1, countOf(merged.Notes, res.Scenario+" did not end alike in every shard (shard 1: safe; shard 2: inconclusive): the merged report keeps shard 2's; every shard runs it, so its verdict varies from run to run"))
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
