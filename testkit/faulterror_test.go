package testkit_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// urlOnlyPoster posts entry-1 unless the ledger has an entry, under a lock
// that serializes its deliveries, and retries only on a *url.Error, as an
// agent that retries its HTTP client's transport failures does.
func urlOnlyPoster(l **tools.Ledger) func(context.Context) error {
	var deliveries sync.Mutex
	return func(ctx context.Context) error {
		deliveries.Lock()
		defer deliveries.Unlock()
		if n, err := (*l).CountTraced(ctx); err != nil || n > 0 {
			return err
		}
		var err error
		for range 3 {
			err = (*l).PostTraced(ctx, "entry-1", "hello")
			var ue *url.Error
			if err == nil || !errors.As(err, &ue) {
				return err
			}
		}
		return err
	}
}

// The summary of a suite whose agent retried no injected fault says so,
// under the verdict, and names testkit.FaultError; with FaultError giving
// the *url.Error the agent looks for, its retry runs and posts twice, the
// test fails, and there is no note. An agent that retries every error
// gets none either.
func TestNoteWhenNoInjectedFaultWasRetried(t *testing.T) {
	var l *tools.Ledger
	const note = "\n  note: no injected fault was retried"

	ft := &fakeT{name: "TestURLOnly"}
	rep := testkit.TestAgent(ft, urlOnlyPoster(&l), ledgerSetup(&l))
	require.False(t, ft.failed(), "an agent that never retries is safe: %v", ft.errors)
	require.NotEmpty(t, ft.logs)
	summary := ft.logs[len(ft.logs)-1]
	assert.Contains(t, summary, "SAFE")
	assert.Contains(t, summary, note)
	assert.Contains(t, summary, "give those with testkit.FaultError")
	assert.Len(t, rep.Notes, 1)

	ft = &fakeT{name: "TestURLOnly"}
	rep = testkit.TestAgent(ft, urlOnlyPoster(&l), ledgerSetup(&l), testkit.FaultError(func(op string, kind runtime.FaultKind) error {
		return &url.Error{Op: "Post", URL: "http://ledger/" + op, Err: context.DeadlineExceeded}
	}))
	require.True(t, ft.failed(), "the lost acknowledgement is retried and posts twice")
	assert.Contains(t, strings.Join(ft.errors, "\n"), "[duplicate_write] post executed 2 times")
	assert.Contains(t, ft.subs, "TestURLOnly/lost_acknowledgement/post#1")
	assert.Empty(t, rep.Notes)
	assert.NotContains(t, strings.Join(ft.logs, "\n"), "no injected fault was retried")

	ft = &fakeT{name: "TestRetrier"}
	rep = testkit.TestAgent(ft, retrier(&l), ledgerSetup(&l))
	require.True(t, ft.failed())
	assert.Empty(t, rep.Notes)
	assert.NotContains(t, strings.Join(ft.logs, "\n"), "no injected fault was retried")
}
