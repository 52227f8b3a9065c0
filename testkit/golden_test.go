package testkit_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reader counts the entries n times: safe under every scenario.
func reader(l **tools.Ledger, n int) func(context.Context) error {
	return func(ctx context.Context) error {
		for range n {
			if _, err := (*l).CountTraced(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// poster posts once under key.
func poster(l **tools.Ledger, key string) func(context.Context) error {
	return func(ctx context.Context) error { return (*l).PostTraced(ctx, key, "hello") }
}

// goldenRun runs TestAgent with Golden(path) on a fake T and returns it
// with the golden messages it got (errors first, then logs).
func goldenRun(t *testing.T, path string, agent func(**tools.Ledger) func(context.Context) error, opts ...testkit.Option) (*fakeT, []string, []string) {
	t.Helper()
	var l *tools.Ledger
	ft := &fakeT{name: "TestGolden"}
	testkit.TestAgent(ft, agent(&l), append([]testkit.Option{ledgerSetup(&l), testkit.Golden(path), testkit.NoSummary()}, opts...)...)
	var errs, logs []string
	for _, e := range ft.errors {
		if strings.Contains(e, "golden trace") {
			errs = append(errs, e)
		}
	}
	for _, e := range ft.logs {
		if strings.Contains(e, "golden trace") {
			logs = append(logs, e)
		}
	}
	return ft, errs, logs
}

func TestGoldenRecordsThenComparesOrderAndCount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testdata", "count.trace.json")
	twice := func(l **tools.Ledger) func(context.Context) error { return reader(l, 2) }
	once := func(l **tools.Ledger) func(context.Context) error { return reader(l, 1) }

	t.Setenv("AGENTIDEM_UPDATE", "1")
	ft, errs, logs := goldenRun(t, path, twice)
	require.False(t, ft.failed(), "%v", ft.errors)
	require.Empty(t, errs)
	assert.Contains(t, strings.Join(logs, "\n"), "recorded the golden trace")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `{
  "test": "TestGolden",
  "ordered": true,
  "invocations": [
    [
      {"op":"count","kind":"read"},
      {"op":"count","kind":"read"}
    ]
  ]
}
`, string(b), "timings, results and call ids stay out of the file")

	t.Setenv("AGENTIDEM_UPDATE", "")
	ft, errs, _ = goldenRun(t, path, twice)
	assert.False(t, ft.failed(), "the same agent passes: %v", ft.errors)
	assert.Empty(t, errs)

	ft, errs, _ = goldenRun(t, path, once)
	require.True(t, ft.failed(), "an agent that changed fails")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "the agent's fault-free calls differ from the golden trace "+path)
	assert.Contains(t, errs[0], "  invocation 1:\n      read  count\n    - read  count\n")
	assert.Contains(t, errs[0], "If the change is intended, record it again with\n    go test github.com/agentidem/agentidem-go/testkit -run '^TestGolden$' -update")
}

func TestGoldenComparesIdentities(t *testing.T) {
	path := filepath.Join(t.TempDir(), "post.trace.json")
	entry1 := func(l **tools.Ledger) func(context.Context) error { return poster(l, "entry-1") }
	entry2 := func(l **tools.Ledger) func(context.Context) error { return poster(l, "entry-2") }
	t.Setenv("AGENTIDEM_UPDATE", "true")
	goldenRun(t, path, entry1)
	t.Setenv("AGENTIDEM_UPDATE", "")

	_, errs, _ := goldenRun(t, path, entry1)
	assert.Empty(t, errs, "same op, same identity")
	_, errs, _ = goldenRun(t, path, entry2)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "    - write post \"entry-1\"\n    + write post \"entry-2\"")
}

func TestGoldenMissingFileFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.trace.json")
	twice := func(l **tools.Ledger) func(context.Context) error { return reader(l, 2) }
	ft, errs, _ := goldenRun(t, path, twice)
	require.True(t, ft.failed(), "a missing golden file is never a silent pass")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "no golden trace "+path+" yet: record it with")
	assert.NoFileExists(t, path)
}

func TestGoldenUnderRunIsLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.trace.json")
	var l *tools.Ledger
	ft := &fakeT{name: "TestGolden"}
	testkit.Run(ft, reader(&l, 1), ledgerSetup(&l), testkit.Golden(path), testkit.NoSummary())
	assert.False(t, ft.failed())
	assert.Contains(t, strings.Join(ft.logs, "\n"), "no golden trace")
}

// parallel posts two entries from two goroutines and counts: the baseline's
// order depends on the goroutines, the golden trace's must not.
func parallel(l **tools.Ledger) func(context.Context) error {
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, key := range []string{"b", "a"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = (*l).PostTraced(ctx, key, key)
			}()
		}
		wg.Wait()
		if errs[0] != nil {
			return errs[0]
		}
		if errs[1] != nil {
			return errs[1]
		}
		_, err := (*l).CountTraced(ctx)
		return err
	}
}

func TestGoldenParallelAgentIsStable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parallel.trace.json")
	t.Setenv("AGENTIDEM_UPDATE", "1")
	goldenRun(t, path, parallel, testkit.Schedules(2))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"ordered": true`)
	assert.Regexp(t, `(?s)"post".*"post".*"count"`, string(b), "the posts of one round before the count that follows it")
	t.Setenv("AGENTIDEM_UPDATE", "")
	for range 3 {
		_, errs, _ := goldenRun(t, path, parallel, testkit.Schedules(2))
		require.Empty(t, errs)
	}
}

// TestAGoldenTraceIsKnownForNoReport: a golden trace is JSON in a
// package's testdata/, where a walk of a tree of reports may meet it;
// runtime.ReadReport (and so agentidem-gen report) must know it for a
// golden trace, not call it a report of an unknown version, whatever calls
// it records (reads, or a write with its identity).
func TestAGoldenTraceIsKnownForNoReport(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AGENTIDEM_UPDATE", "1")
	for name, agent := range map[string]func(**tools.Ledger) func(context.Context) error{
		"read.trace.json":  func(l **tools.Ledger) func(context.Context) error { return reader(l, 2) },
		"write.trace.json": func(l **tools.Ledger) func(context.Context) error { return poster(l, "k1") },
	} {
		path := filepath.Join(dir, "testdata", name)
		goldenRun(t, path, agent)
		require.FileExists(t, path)
		_, err := runtime.ReadReport(path)
		require.Error(t, err, name)
		assert.Equal(t, "reading report "+path+": a golden trace that testkit.Golden keeps, not a report; the reports are the files testkit writes below $AGENTIDEM_REPORT_DIR", err.Error())
	}
}
