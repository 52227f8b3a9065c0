package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runSlowState runs a two-write agent whose State sleeps for each call
// (a remote database read), and returns the report's notes.
func runSlowState(t *testing.T, sleep time.Duration) (*Report, []string) {
	t.Helper()
	var mu sync.Mutex
	var rows []string
	op := &Op{Name: "open_ticket_slowstate", Kind: KindWrite, Params: []string{"order"}}
	open := func(ctx context.Context, order string) error {
		return traced(ctx, op, []any{order}, []any{order}, func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			rows = append(rows, order)
			return nil
		})
	}
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error {
		if err := open(ctx, "o-1"); err != nil {
			return err
		}
		return open(ctx, "o-2")
	}, Setup(func(context.Context) error { mu.Lock(); rows = nil; mu.Unlock(); return nil }),
		State(func() any {
			time.Sleep(sleep)
			mu.Lock()
			defer mu.Unlock()
			return append([]string{}, rows...)
		}))
	require.NoError(t, err)
	var notes []string
	for _, n := range rep.Notes {
		if strings.HasPrefix(n, "State took") {
			notes = append(notes, n)
		}
	}
	return rep, notes
}

// A State that sleeps 25 ms per call (57 calls) takes most of the suite's time: the
// report says so, how often it was called and what each call cost. A
// 200 ms State made a 0.3 s suite take 25 s with no word of why (red
// team rtV #4).
func TestSlowStateIsNoted(t *testing.T) {
	rep, notes := runSlowState(t, 25*time.Millisecond)
	require.Len(t, notes, 1, "%q", rep.Notes)
	t.Log(notes[0])
	assert.Regexp(t, `^State took [0-9.]+m?s of the suite's [0-9.]+m?s \([0-9]+%\): it was called [0-9]+ times \([0-9.]+ per agent run, [0-9]+ runs\), [0-9]+ms a call on average; the suite calls it before and after each write it judges and at the end of each run`, notes[0])
	assert.Contains(t, notes[0], "keep it cheap")
}

// A cheap State says nothing.
func TestCheapStateIsNotNoted(t *testing.T) {
	rep, notes := runSlowState(t, 0)
	assert.Empty(t, notes, "%q", rep.Notes)
}

// The clock around State costs one time.Now pair and two atomic adds.
func BenchmarkStateClock(b *testing.B) {
	v := []string{"o-1"}
	plain := (&config{state: func() any { return v }}).guardedState(context.Background())
	timed := (&config{state: func() any { return v }, stateClock: new(stateClock)}).guardedState(context.Background())
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			plain()
		}
	})
	b.Run("timed", func(b *testing.B) {
		for b.Loop() {
			timed()
		}
	})
}
