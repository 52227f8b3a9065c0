package testkit_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

// journal is an append-only sink: a repeated post is a second entry.
type journal struct {
	mu      sync.Mutex
	entries []string
}

var (
	journalPostOp = &runtime.Op{Name: "post", Kind: runtime.KindWrite, Params: []string{"key"}}
	journalHasOp  = &runtime.Op{Name: "has", Kind: runtime.KindRead, Params: []string{"key"}}
)

func (j *journal) post(ctx context.Context, key string) error {
	return tracedCall(ctx, journalPostOp, []any{key}, []any{key}, nil, func(context.Context) error {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.entries = append(j.entries, key)
		return nil
	})
}

func (j *journal) has(ctx context.Context, key string) (bool, error) {
	var ok bool
	err := tracedCall(ctx, journalHasOp, []any{key}, []any{key}, nil, func(context.Context) error {
		j.mu.Lock()
		defer j.mu.Unlock()
		ok = slices.Contains(j.entries, key)
		return nil
	})
	return ok, err
}

// batchAgent posts k0, k1 and k2 in parallel, unless a check says they
// were posted: the buggy one checks k0 alone (done, so a restart skips
// the rest), the fixed one checks each key before its post.
func batchAgent(j **journal, checkEach bool) func(context.Context) error {
	return func(ctx context.Context) error {
		keys := []string{"k0", "k1", "k2"}
		if !checkEach {
			done, err := (*j).has(ctx, "k0")
			if err != nil || done {
				return err
			}
		}
		g, gctx := errgroup.WithContext(ctx)
		for _, k := range keys {
			g.Go(func() error {
				if checkEach {
					done, err := (*j).has(gctx, k)
					if err != nil || done {
						return err
					}
				}
				return (*j).post(gctx, k)
			})
		}
		return g.Wait()
	}
}

// A crash right after one of several parallel writes leaves that write
// done and the others never sent, and a restart that skips the batch when
// its first write is there repeats the one that was done: crash_restart
// finds it. In the listed order every call of the batch ran before any
// finished, so a crash after any of them left all three done; the restart
// found k0 and posted nothing, and the suite said safe. With ExactlyOnce,
// the crash after k0 shows the other two never posted. Checking each key
// makes the restarts safe.
func TestCrashAfterOneWriteOfABatchLeavesTheOthersUnsent(t *testing.T) {
	var j *journal
	run := func(checkEach bool, opts ...testkit.Option) *runtime.Report {
		return testkit.Run(&fakeT{name: "TestCrashBatch"}, batchAgent(&j, checkEach), append([]testkit.Option{
			testkit.NoSummary(),
			testkit.Setup(func(context.Context) error { j = &journal{}; return nil }),
		}, opts...)...)
	}
	found := func(rep *runtime.Report, code, scenario string) bool {
		for _, f := range rep.Findings {
			if f.Code == code && f.Scenario == scenario {
				return true
			}
		}
		return false
	}

	for range 3 {
		rep := run(false)
		assert.True(t, found(rep, runtime.CodeDuplicateWrite, "crash_restart/post#2"), "the restart posted k1 again: %v", rep.Findings)
		assert.True(t, found(rep, runtime.CodeDuplicateWrite, "crash_restart/post#3"), "the restart posted k2 again: %v", rep.Findings)
		assert.False(t, found(rep, runtime.CodeDuplicateWrite, "crash_restart/post#1"), "k0 alone was done, and the restart skipped: %v", rep.Findings)
		var res *runtime.Result
		for _, r := range rep.Results {
			if r.Scenario == "crash_restart/post#2" {
				res = r
			}
		}
		require.NotNil(t, res)
		var executed []string
		for _, o := range res.Trace.Ops {
			if o.Invocation == 1 && o.Name == "post" && o.Status == runtime.StatusSuccess {
				executed = append(executed, o.Identity)
			}
		}
		assert.Equal(t, []string{`"k1"`}, executed, "before the crash, only the write it follows ran")

		rep = run(false, testkit.ExactlyOnce())
		assert.True(t, found(rep, runtime.CodeMissingWrite, "crash_restart/post#1"), "k1 and k2 were never posted: %v", rep.Findings)

		// Checking each key, the restart posts only what was not done.
		// (Two deliveries at once still both post: duplicate_delivery/
		// concurrent, a race this test is not about.)
		rep = run(true, testkit.ExactlyOnce())
		for _, f := range rep.Findings {
			assert.False(t, strings.HasPrefix(f.Scenario, "crash_restart/"), "checking each key: %s: %s", f.Scenario, f.Message)
		}
	}
}
