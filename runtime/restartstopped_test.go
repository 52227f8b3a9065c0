package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A red team (rtW #6) sent unkeyed refunds through a sony/gobreaker
// circuit breaker that trips on one failure, built in Setup: in
// crash_restart the crashed call's context.Canceled counted as a failure,
// the breaker opened, and the restart's refund was refused before it was
// made ("circuit breaker is open", no traced call, where the baseline made
// one). The scenario was "ok ... nothing to note"; a real restart is a new
// process with a closed breaker, and refunds again. Here the breaker is a
// counter of failures that refuses every call after one.

var (
	opGetOrderBr = &Op{Name: "get_order", Kind: KindRead, Params: []string{"order"}, Pos: "restartstopped_test.go:1"}
	opRefundBr   = &Op{Name: "refund", Kind: KindWrite, Params: []string{"order"}, Pos: "restartstopped_test.go:2"}
)

var errBreakerOpen = errors.New("circuit breaker is open")

// breaker refuses every call once one call failed; with ignoreCanceled it
// does not count a cancelled call as a failure.
type breaker struct {
	mu             sync.Mutex
	failures       int
	ignoreCanceled bool
}

func (b *breaker) execute(call func() error) error {
	b.mu.Lock()
	open := b.failures >= 1
	b.mu.Unlock()
	if open {
		return errBreakerOpen
	}
	err := call()
	if err != nil && !(b.ignoreCanceled && errors.Is(err, context.Canceled)) {
		b.mu.Lock()
		b.failures++
		b.mu.Unlock()
	}
	return err
}

// breakerShop is the world (refunds by order, unkeyed) and the agent's
// breaker, both made in Setup: the crashed delivery and its restart share
// the breaker, as the suite's crash does not reset the process's memory.
type breakerShop struct {
	mu             sync.Mutex
	refunds        []string
	br             *breaker
	ignoreCanceled bool
	read           bool // the agent reads the order before refunding
}

func (s *breakerShop) setup(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refunds = nil
	s.br = &breaker{ignoreCanceled: s.ignoreCanceled}
	return nil
}

func (s *breakerShop) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"refunds": append([]string{}, s.refunds...)}
}

// agent refunds order ord-1 through the breaker, trying once more on an
// error unless the breaker is open, as the red team's agent did.
func (s *breakerShop) agent(ctx context.Context) error {
	if s.read {
		if err := traced(ctx, opGetOrderBr, []any{"ord-1"}, nil, func(context.Context) error { return nil }); err != nil {
			return err
		}
	}
	call := func() error {
		return traced(ctx, opRefundBr, []any{"ord-1"}, []any{"ord-1"}, func(context.Context) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.refunds = append(s.refunds, "ord-1")
			return nil
		})
	}
	err := s.br.execute(call)
	if err != nil && !errors.Is(err, errBreakerOpen) {
		err = s.br.execute(call)
	}
	if err != nil {
		return fmt.Errorf("order ord-1: %w", err)
	}
	return nil
}

func crashResult(t *testing.T, rep *Report) *Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Scenario == "crash_restart/refund#1" {
			return r
		}
	}
	t.Fatalf("no crash_restart/refund#1 among %d results", len(rep.Results))
	return nil
}

// The restart the breaker refused is inconclusive, with a note naming the
// error, the calls it made against the baseline's, and in-process state as
// the likely cause; never ok.
func TestCrashRestartStoppedByInMemoryStateIsInconclusive(t *testing.T) {
	for _, read := range []bool{false, true} {
		for range 3 {
			s := &breakerShop{read: read}
			rep, err := Run(context.Background(), "breaker", s.agent, Setup(s.setup), State(s.snapshot))
			require.NoError(t, err)
			require.True(t, rep.BaselineSucceeded, "baseline: %+v", rep.BaselineFailure)
			r := crashResult(t, rep)
			assert.True(t, r.Inconclusive, "read=%v: the restart was refused by the breaker the crash opened: %v", read, r.Trace.Notes)
			assert.False(t, r.Safe, "read=%v", read)
			notes := strings.Join(r.Trace.Notes, "\n")
			where, made := "before any traced call", "where the baseline made 1"
			if read {
				where, made = "after 1 traced call(s), the last 2:get_order#2", "where the baseline made 2"
			}
			assert.Contains(t, notes, "crash_restart: the restart stopped "+where+" with an error no injected fault caused (order ord-1: circuit breaker is open), "+made, "read=%v", read)
			assert.Contains(t, notes, "in-memory state the restart shares with the crashed delivery", "read=%v", read)
			assert.Contains(t, notes, "a circuit breaker that counted the crash's cancellation as a failure", "read=%v", read)
		}
	}
}

// The twin whose breaker does not count a cancelled call: the restart
// refunds again, and crash_restart shows the duplicate it is; no note of
// a stopped restart.
func TestCrashRestartPastABreakerThatIgnoresCancellationIsUnsafe(t *testing.T) {
	for _, read := range []bool{false, true} {
		for range 3 {
			s := &breakerShop{read: read, ignoreCanceled: true}
			rep, err := Run(context.Background(), "breaker", s.agent, Setup(s.setup), State(s.snapshot))
			require.NoError(t, err)
			require.True(t, rep.BaselineSucceeded, "baseline: %+v", rep.BaselineFailure)
			r := crashResult(t, rep)
			assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "read=%v: %v", read, r.Findings)
			assert.False(t, r.Safe, "read=%v", read)
			assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "crash_restart: the restart stopped", "read=%v", read)
		}
	}
}
