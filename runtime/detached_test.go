package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// detachedWarnings returns the context_detached warnings of the suite.
func detachedWarnings(rep *Report) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.Code == CodeContextDetached && f.Severity == SeverityWarning {
			out = append(out, f.Message)
		}
	}
	return out
}

// An agent function that hands its tools context.Background() instead of
// the ctx the suite gave it, through a correct agent that passes on the
// ctx it is given, gets one warning that says the ctx was dropped before
// the first call, listing the sites, not one warning per site, each
// pointing at a correct line (red team rtV #3). A tool call of its own
// with context.Background() amid calls that pass the ctx is named alone,
// and two such are one warning naming both.
func TestDetachedContextIsOneWarning(t *testing.T) {
	var s *store
	setup := Setup(func(context.Context) error { s = newStore(); return nil })
	agent := func(ctx context.Context) error { // passes on the ctx it is given
		for _, k := range []string{"a", "b", "c"} {
			if err := s.putTraced(ctx, k, 1); err != nil {
				return err
			}
		}
		return nil
	}

	rep := mustRun(t, "dropped", func(context.Context) error { return agent(context.Background()) }, setup)
	got := detachedWarnings(rep)
	require.Len(t, got, 1, "one warning for the three calls: %q", got)
	assert.True(t, strings.HasPrefix(got[0], "every traced call of the run (3, from detached_test.go:"), got[0])
	assert.Contains(t, got[0], "the agent's ctx was dropped before the first of them")

	// A retry from another line, in the scenarios whose fault it meets,
	// is no second cause.
	retrying := func(ctx context.Context) error {
		if err := s.putTraced(ctx, "a", 1); err != nil {
			return s.putTraced(ctx, "a", 1)
		}
		return s.putTraced(ctx, "b", 1)
	}
	rep = mustRun(t, "dropped, retried", func(context.Context) error { return retrying(context.Background()) }, setup)
	got = detachedWarnings(rep)
	require.Len(t, got, 1, "one warning though the retry's line shows only in later scenarios: %q", got)
	assert.True(t, strings.HasPrefix(got[0], "every traced call of the run (2, from detached_test.go:"), got[0])

	rep = mustRun(t, "one call", func(ctx context.Context) error {
		if err := s.putTraced(ctx, "a", 1); err != nil {
			return err
		}
		return s.putTraced(context.Background(), "b", 1)
	}, setup)
	got = detachedWarnings(rep)
	require.Len(t, got, 1, "%q", got)
	assert.True(t, strings.HasPrefix(got[0], "a tool was called from detached_test.go:"), got[0])
	assert.NotContains(t, got[0], "every traced call")

	rep = mustRun(t, "two calls", func(ctx context.Context) error {
		if err := s.putTraced(ctx, "a", 1); err != nil {
			return err
		}
		if err := s.putTraced(context.Background(), "b", 1); err != nil {
			return err
		}
		return s.putTraced(context.Background(), "c", 1)
	}, setup)
	got = detachedWarnings(rep)
	require.Len(t, got, 1, "%q", got)
	assert.True(t, strings.HasPrefix(got[0], "tools were called from detached_test.go:"), got[0])
	assert.Equal(t, 2, strings.Count(got[0], "detached_test.go:"), got[0])

	rep = mustRun(t, "passes it", agent, setup)
	assert.Empty(t, detachedWarnings(rep))
}
