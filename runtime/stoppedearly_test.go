package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A red team (rtL, R2) ran an Anthropic tool runner against a model API
// that rate-limits every other request, shared by both deliveries: in some
// runs one delivery got a 429 past its client's retries and ended before
// any tool call, and duplicate_delivery/concurrent, holding the other's
// calls alone, was "ok". A bug only that scenario shows (check-then-act at
// the sink) passed in those runs. Here the model is a counter of requests
// that answers one of them with the 429 error: deterministic, as the
// lockstep holds the first delivery at its first gate until the second
// made its first request.

var (
	opFindRoom = &Op{Name: "find_booking", Kind: KindRead, Params: []string{"room"}, Pos: "stoppedearly_test.go:1"}
	opBookRoom = &Op{Name: "book_room", Kind: KindWrite, Params: []string{"room"}, Pos: "stoppedearly_test.go:2"}
	opConfirm  = &Op{Name: "send_confirmation", Kind: KindWrite, Params: []string{"room"}, Pos: "stoppedearly_test.go:3"}
)

// roomHotel is the world: bookings by room, and a model API whose n-th
// request of a scenario (from 1) after the first Setup (the baseline's)
// fails when n is failAt.
type roomHotel struct {
	mu       sync.Mutex
	books    map[string]int
	requests int
	setups   int
	failAt   int
	refuse   bool       // book_room refuses a room already booked (a conditional insert)
	lock     sync.Mutex // the agent's own lock (lockedAgent)
}

func (h *roomHotel) setup(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.books, h.requests = map[string]int{}, 0
	h.setups++
	return nil
}

func (h *roomHotel) snapshot() any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return fmt.Sprint(h.books)
}

// model is one request to the model API.
func (h *roomHotel) model() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests++
	if h.setups > 1 && h.requests == h.failAt {
		return errors.New("failed to get next message: POST /v1/messages: 429 Too Many Requests (rate_limit_error) after 2 retries")
	}
	return nil
}

func (h *roomHotel) find(ctx context.Context) (found bool, err error) {
	err = traced(ctx, opFindRoom, []any{"A"}, nil, func(context.Context) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		found = h.books["A"] > 0
		return nil
	})
	return found, err
}

func (h *roomHotel) book(ctx context.Context) error {
	return traced(ctx, opBookRoom, []any{"A"}, []any{"A"}, func(context.Context) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.refuse && h.books["A"] > 0 {
			return errors.New("room A is already booked")
		}
		h.books["A"]++
		return nil
	})
}

// checkThenBook asks the model, finds room A's booking, and, if there is
// none, asks the model again and books: two deliveries at once book twice.
func (h *roomHotel) checkThenBook(ctx context.Context) error {
	if err := h.model(); err != nil {
		return err
	}
	found, err := h.find(ctx)
	if err != nil || found {
		return err
	}
	if err := h.model(); err != nil {
		return err
	}
	return h.book(ctx)
}

// lockedAgent is checkThenBook under the agent's own lock: the second
// delivery waits for it, finds the booking and returns nil, having made
// one call where the first made two.
func (h *roomHotel) lockedAgent(ctx context.Context) error {
	h.lock.Lock()
	defer h.lock.Unlock()
	return h.checkThenBook(ctx)
}

// refusedAgent books (the sink refuses a second booking of the room) and
// then confirms; a refused booking is its error: the second delivery makes
// one call where the first made two, and returns the sink's error.
func (h *roomHotel) refusedAgent(ctx context.Context) error {
	if err := h.book(ctx); err != nil {
		return fmt.Errorf("booking: %w", err)
	}
	return traced(ctx, opConfirm, []any{"A"}, []any{"A"}, func(context.Context) error { return nil })
}

func runRooms(t *testing.T, scenario string, h *roomHotel, agent func(context.Context) error) *Result {
	t.Helper()
	rep, err := Run(context.Background(), "rooms", agent, OnlyScenario(scenario), Setup(h.setup), State(h.snapshot))
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded, "baseline: %+v", rep.BaselineFailure)
	require.Len(t, rep.Results, 1)
	return rep.Results[0]
}

func TestDuplicateDeliveryStoppedByTheWorldIsInconclusive(t *testing.T) {
	for _, c := range []struct {
		scenario string
		failAt   int
		stopped  string
	}{
		// Each delivery's first request is 1 or 2: one of them stops
		// before any call, the other finds none and books.
		{ScenarioDuplicateConcurrent, 2, "stopped before any traced call with an error no injected fault caused (failed to get next message: POST /v1/messages: 429"},
		// The first delivery finds none, and its second request fails:
		// the second delivery finds none as well, and books.
		{ScenarioDuplicateSeq, 2, "duplicate delivery: delivery 1 stopped after 1 traced call(s), the last 1:find_booking#1 with an error no injected fault caused"},
	} {
		for range 3 {
			h := &roomHotel{failAt: c.failAt}
			r := runRooms(t, c.scenario, h, h.checkThenBook)
			assert.True(t, r.Inconclusive, "%s: one delivery's work is no duplicate: inconclusive (%v)", c.scenario, r.Trace.Notes)
			assert.False(t, r.Safe, c.scenario)
			notes := strings.Join(r.Trace.Notes, "\n")
			assert.Contains(t, notes, c.stopped, c.scenario)
			assert.Contains(t, notes, "made 2: the world stopped it", c.scenario)
		}
	}
}

// The twins: without the 429 the buggy agent is caught in the concurrent
// scenario, as it was; and correct agents whose second delivery makes
// fewer calls, returning nil or the sink's refusal, stay safe, not
// inconclusive.
func TestDuplicateDeliveryFewerCallsStillJudged(t *testing.T) {
	for range 3 {
		h := &roomHotel{}
		r := runRooms(t, ScenarioDuplicateConcurrent, h, h.checkThenBook)
		assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "the check-then-book without a 429: %v", r.Findings)
		assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "duplicate delivery: delivery")
	}
	for _, scenario := range []string{ScenarioDuplicateSeq, ScenarioDuplicateConcurrent} {
		for _, c := range []struct {
			name  string
			agent func(h *roomHotel) func(context.Context) error
			h     *roomHotel
		}{
			{"sequential check-then-book: the second finds the booking", func(h *roomHotel) func(context.Context) error { return h.checkThenBook }, &roomHotel{}},
			{"the agent's own lock: the second waits, then finds the booking", func(h *roomHotel) func(context.Context) error { return h.lockedAgent }, &roomHotel{}},
			{"the sink refuses the second booking, the agent returns its error", func(h *roomHotel) func(context.Context) error { return h.refusedAgent }, &roomHotel{refuse: true}},
		} {
			if scenario == ScenarioDuplicateConcurrent && strings.HasPrefix(c.name, "sequential") {
				continue // the bug above
			}
			for range 2 {
				r := runRooms(t, scenario, c.h, c.agent(c.h))
				assert.Empty(t, resultCodes(r), "%s, %s: %v", scenario, c.name, r.Findings)
				assert.True(t, r.Safe, "%s, %s", scenario, c.name)
				assert.False(t, r.Inconclusive, "%s, %s: %v", scenario, c.name, r.Trace.Notes)
				assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "duplicate delivery: delivery", "%s, %s", scenario, c.name)
			}
		}
	}
}

// A model API client's retry back-off (the Stainless-generated SDKs,
// Anthropic's and OpenAI's: a select on time.After and the caller's
// context) wakes by itself: busy, as time.Sleep is, with no grace that
// would let the lockstep take it for a lock (rtL, R3). Another select of
// the same SDK (a stream reader waiting for its next event) is not.
func TestAPIClientRetryBackoffIsBusy(t *testing.T) {
	for _, tc := range []struct {
		block string
		busy  bool
		why   string
	}{
		{"goroutine 43 [select]:\ngithub.com/anthropics/anthropic-sdk-go/v2/internal/requestconfig.(*RequestConfig).send(0xc000180000, {0xa1a950, 0xc000300000}, 0x0)\n\t/root/go/pkg/mod/github.com/anthropics/anthropic-sdk-go/v2@v2.15.0/internal/requestconfig/requestconfig.go:653 +0x6e5\ngithub.com/anthropics/anthropic-sdk-go/v2/internal/requestconfig.(*RequestConfig).Execute(0xc000180000)",
			true, retryBackoffWhy},
		{"goroutine 44 [select]:\ngithub.com/openai/openai-go/internal/requestconfig.(*RequestConfig).Execute(0xc000180000)\n\t/root/go/pkg/mod/github.com/openai/openai-go@v1.12.0/internal/requestconfig/requestconfig.go:510 +0x9a5",
			true, retryBackoffWhy},
		{"goroutine 45 [select]:\ngithub.com/anthropics/anthropic-sdk-go/v2/packages/ssestream.(*Stream[...]).Next(0xc000180000)\n\t/root/go/pkg/mod/github.com/anthropics/anthropic-sdk-go/v2@v2.15.0/packages/ssestream/ssestream.go:150 +0x45",
			false, ""},
		// Not in a select: the back-off's function on the way to its
		// HTTP request, waiting on a lock of the agent's.
		{"goroutine 46 [sync.Mutex.Lock]:\nsync.runtime_SemacquireMutex(0xc000012345?, 0x0?, 0x1?)\n\t/usr/local/go/src/runtime/sema.go:95 +0x25\ngithub.com/anthropics/anthropic-sdk-go/v2/internal/requestconfig.(*RequestConfig).send(0xc000180000)",
			false, ""},
	} {
		g, ok := parseGoroutine(tc.block)
		require.True(t, ok, tc.block)
		busy, why := g.busy(time.Time{})
		assert.Equal(t, tc.busy, busy, "goroutine %d [%s]", g.id, g.state)
		assert.Equal(t, tc.why, why, "goroutine %d [%s]", g.id, g.state)
	}
}
