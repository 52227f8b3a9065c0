package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	shardOpA = &runtime.Op{Name: "a", Kind: runtime.KindWrite, Params: []string{"v"}}
	shardOpB = &runtime.Op{Name: "b", Kind: runtime.KindWrite, Params: []string{"v"}}
)

// shardReports runs a two-write parallel agent (6 schedules) split in n
// shards and saves each shard's report, returning the paths.
func shardReports(t *testing.T, n int) []string {
	t.Helper()
	write := func(ctx context.Context, op *runtime.Op) (err error) {
		c, _ := runtime.Begin(ctx, op, []any{op.Name}, []any{"same"}, nil)
		if err = c.Start(); err != nil {
			return err
		}
		return c.Finish(nil)
	}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, op := range []*runtime.Op{shardOpA, shardOpB} {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = write(ctx, op) }()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	dir := t.TempDir()
	var paths []string
	for i := 1; i <= n; i++ {
		rep, _ := runtime.Run(context.Background(), "TestPair", agent, runtime.ShardOf(i, n))
		require.NotNil(t, rep.Shard)
		path := filepath.Join(dir, "shard"+string(rune('0'+i))+".json")
		f, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, rep.WriteJSON(f))
		require.NoError(t, f.Close())
		paths = append(paths, path)
	}
	return paths
}

func TestReportMergesShards(t *testing.T) {
	paths := shardReports(t, 3)
	merged := filepath.Join(t.TempDir(), "TestPair.json")
	code, out, errOut := runCLI(append([]string{"report", "--merge", merged}, paths...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "wrote "+merged)
	assert.Equal(t, 1, strings.Count(out, "agentidem TestPair:"), "one merged report rendered:\n%s", out)

	rep, err := readValidReport(merged) // the schema accepts it
	require.NoError(t, err)
	require.NotNil(t, rep.Shard)
	assert.Equal(t, []int{1, 2, 3}, rep.Shard.Merged)
	var schedules []string
	for _, r := range rep.Results {
		if r.Kind == runtime.ScenarioInterleaving {
			schedules = append(schedules, r.Schedule)
		}
	}
	assert.Len(t, schedules, 6, "all six orders of two dependent calls, from three shards")
	assert.Equal(t, 6, rep.Shard.Ran)

	// A missing shard is refused by name.
	code, _, errOut = runCLI("report", "--merge", filepath.Join(t.TempDir(), "x.json"), paths[0], paths[2])
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "shard 2 of 3 of TestPair missing")

	// Each shard's own report says which part it ran.
	code, out, _ = runCLI("report", paths[1])
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "shard 2 of 3")
}
