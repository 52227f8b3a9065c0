package runtime

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A number is a moment (epochLike) only where, read as seconds,
// milliseconds, microseconds or nanoseconds since the Unix epoch, it falls
// within the suite's wall-clock window; a counter, an amount, a snowflake
// id, a moment of last year are numbers.
func TestEpochLike(t *testing.T) {
	w := nowWindow()
	now := time.Now()
	snowflake := (now.UnixMilli()-1700000000000)<<12 | 7 // red team's randid
	twitter := (now.UnixMilli()-1288834974657)<<22 | 7
	for n, want := range map[string]bool{
		strconv.FormatInt(now.Unix(), 10):                        true,
		strconv.FormatInt(now.UnixMilli(), 10):                   true,
		strconv.FormatInt(now.UnixMicro(), 10):                   true,
		strconv.FormatInt(now.UnixNano(), 10):                    true,
		strconv.FormatInt(now.Unix(), 10) + ".123":               true, // unixepoch('subsec')
		strconv.FormatInt(now.UnixMilli(), 10) + ".5":            false,
		strconv.FormatInt(now.Add(-2*time.Hour).UnixMilli(), 10): false,
		strconv.FormatInt(now.Add(time.Hour).Unix(), 10):         false,
		"-" + strconv.FormatInt(now.Unix(), 10):                  false,
		"1.7964e+09":                                             false,
		"42":                                                     false,
		"1000000":                                                false,
		"1733400000":                                             false, // Stripe's example, 2024
		strconv.FormatInt(snowflake, 10):                         false,
		strconv.FormatInt(twitter, 10):                           false,
		"99999999999999999999":                                   false,
	} {
		assert.Equal(t, want, w.epochLike(n), n)
	}
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	assert.True(t, holdsClock(`{"created_ms":`+ms+`}`))
	assert.False(t, holdsClock(`{"balance":2000000,"n":42}`))
	assert.Equal(t, `{"created_ms":"\u0000clock","n":2}`, withoutClocks(`{"created_ms":`+ms+`,"n":2}`, nil))
	// A moment a call was given stays, as a date-time string does.
	assert.Equal(t, `{"due_ms":`+ms+`}`, withoutClocks(`{"due_ms":`+ms+`}`, map[string]bool{ms: true}))
	assert.Equal(t, `["\u0000clock opened A","\u0000clock"]`,
		withoutMoments(`["2026-05-01T10:00:00Z opened A",`+ms+`]`))
}

// In a testing/synctest bubble the clock starts at 2000-01-01: a moment
// stamped there is one on the bubble's clock, and a suite made there
// widens no window on the real clock (from 2000 to now it would take
// every count from 1e9 to 1.8e9 for Unix seconds).
func TestEpochWindowInABubble(t *testing.T) {
	realNow := time.Now()
	synctest.Test(t, func(t *testing.T) {
		noteSuiteStart(time.Now())
		w := nowWindow()
		assert.True(t, w.epochLike(strconv.FormatInt(time.Now().UnixMilli(), 10)))
		assert.False(t, w.epochLike(strconv.FormatInt(realNow.UnixMilli(), 10)))
	})
	w := nowWindow()
	assert.True(t, w.epochLike(strconv.FormatInt(time.Now().UnixMilli(), 10)))
	assert.False(t, w.epochLike("1000000000"), "a count of 1e9 read as a moment of 2001")
	assert.False(t, w.epochLike(strconv.FormatInt(time.Date(2000, 1, 1, 0, 0, 5, 0, time.UTC).Unix(), 10)))
}

// stampedWorld is a world whose writes stamp what they do in Unix
// milliseconds, as many APIs do, snapshot with the numbers whole.
type stampedWorld struct {
	mu sync.Mutex
	m  map[string]map[string]any
}

func (w *stampedWorld) snapshot() any {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]any{}
	for k, v := range w.m {
		out[k] = maps.Clone(v)
	}
	return out
}

// Parallel writes that stamp what they do in Unix milliseconds: two tags
// added to one post, each with the moment it was added, commute, and their
// Outcome is the same in every order (red team, /tmp/rtK section 1,
// rtk/stampar: concurrent_writes_same_entity and order_variant_outcome on
// every run). Writes whose order shows in the world still do not: two
// titles, stamped the same way, and two due times in Unix milliseconds
// that the calls were given (the one to land last stays), and an Outcome
// listing the tags in the order they were added.
func TestMomentsStampedAsNumbersCommute(t *testing.T) {
	addTag := &Op{Name: "add_tag", Kind: KindWrite, Params: []string{"post", "tag"}, Idempotent: true}
	setTitle := &Op{Name: "set_title", Kind: KindWrite, Params: []string{"post", "title"}, Idempotent: true}
	setDue := &Op{Name: "set_due", Kind: KindWrite, Params: []string{"post", "due_ms"}, Idempotent: true}
	w := &stampedWorld{}
	var added []string // the tags in the order they were added
	call := func(op *Op, v any, do func(m map[string]any)) func(context.Context) error {
		return func(ctx context.Context) (err error) {
			args := []any{"p1", v}
			id := args[:1]
			if op == addTag {
				id = args
			}
			c, _ := Begin(ctx, op, args, id, args[:1])
			if err := c.Start(); err != nil {
				return err
			}
			defer c.Recover(&err)
			w.mu.Lock()
			do(w.m["p1"])
			w.mu.Unlock()
			return c.Finish(nil)
		}
	}
	tag := func(v string) func(context.Context) error {
		return call(addTag, v, func(m map[string]any) {
			if _, ok := m["tag:"+v]; !ok {
				m["tag:"+v] = time.Now().UnixMilli()
				added = append(added, v)
			}
		})
	}
	title := func(v string) func(context.Context) error {
		return call(setTitle, v, func(m map[string]any) { m["title"] = v; m["updated_ms"] = time.Now().UnixMilli() })
	}
	due := func(v int64) func(context.Context) error {
		return call(setDue, v, func(m map[string]any) { m["due_ms"] = v })
	}
	run := func(t *testing.T, calls []func(context.Context) error, opts ...Option) *Report {
		opts = append([]Option{
			Setup(func(context.Context) error {
				w.mu.Lock()
				w.m, added = map[string]map[string]any{"p1": {}}, nil
				w.mu.Unlock()
				return nil
			}),
		}, opts...)
		rep, err := Run(context.Background(), t.Name(), parallelTurn(calls, false), opts...)
		require.NoError(t, err)
		require.True(t, rep.BaselineSucceeded)
		return rep
	}
	state := State(func() any { return w.snapshot() })
	tags := []func(context.Context) error{tag("go"), tag("agents")}
	t.Run("tags, State", func(t *testing.T) {
		rep := run(t, tags, state)
		assert.Empty(t, codes(rep))
	})
	t.Run("tags, State and Outcome", func(t *testing.T) {
		rep := run(t, tags, state, Outcome(func() any { return w.snapshot() }))
		assert.Empty(t, codes(rep))
	})
	t.Run("tags, Outcome in the order added", func(t *testing.T) {
		rep := run(t, tags, state, Outcome(func() any {
			w.mu.Lock()
			defer w.mu.Unlock()
			return []any{slices.Clone(added), w.m["p1"]}
		}))
		assert.True(t, rep.Has(CodeOrderVariantOutcome), "%v", codes(rep))
	})
	t.Run("titles, State", func(t *testing.T) {
		rep := run(t, []func(context.Context) error{title("Hello"), title("World")}, state)
		assert.True(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
	})
	t.Run("due times given, State", func(t *testing.T) {
		now := time.Now().UnixMilli()
		rep := run(t, []func(context.Context) error{due(now + 5000), due(now + 9000)}, state)
		assert.True(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
	})
}

// retryingSaver runs an agent that calls save on account a1 and retries it
// once on an error, save doing do to the account under the world's lock;
// its world is seeded with n = seed.
func retryingSaver(t *testing.T, seed int64, idem bool, do func(m map[string]any)) *Report {
	t.Helper()
	op := &Op{Name: "save", Kind: KindWrite, Params: []string{"account"}, Idempotent: idem}
	w := &stampedWorld{}
	agent := func(ctx context.Context) (err error) {
		for range 2 {
			if err = func() (err error) {
				args := []any{"a1"}
				c, _ := Begin(ctx, op, args, args, args)
				if err := c.Start(); err != nil {
					return err
				}
				defer c.Recover(&err)
				w.mu.Lock()
				do(w.m["a1"])
				w.mu.Unlock()
				return c.Finish(nil)
			}(); err == nil || ctx.Err() != nil {
				return err
			}
		}
		return err
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error {
			w.mu.Lock()
			w.m = map[string]map[string]any{"a1": {"n": seed}}
			w.mu.Unlock()
			return nil
		}),
		State(func() any { return w.snapshot() }))
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded)
	return rep
}

// Across runs a number that reads as a moment is left out; a number that
// does not is compared: a balance that doubles, from a value far from
// now, or a counter incremented twice, with the moment of the change
// stamped beside it, is still a duplicate_write, and so is a count that
// lies near now in seconds but outside the suite's window; the stamp
// alone, in seconds, milliseconds or nanoseconds, is none (red team,
// /tmp/rtK section 1: created_ms was a duplicate_write on every run).
func TestNumbersThatAreNoMomentsAreCompared(t *testing.T) {
	for _, c := range []struct {
		name string
		seed int64
		do   func(m map[string]any) // the write
		dup  bool                   // a duplicate_write
	}{
		{"created_ms kept", 0, func(m map[string]any) {
			if _, ok := m["created_ms"]; !ok {
				m["created_ms"] = time.Now().UnixMilli()
			}
		}, false},
		{"created_s kept", 0, func(m map[string]any) {
			if _, ok := m["created_s"]; !ok {
				m["created_s"] = time.Now().Unix()
			}
		}, false},
		{"created_ns kept", 0, func(m map[string]any) {
			if _, ok := m["created_ns"]; !ok {
				m["created_ns"] = time.Now().UnixNano()
			}
		}, false},
		{"balance doubled", 1_000_000, func(m map[string]any) {
			m["n"] = m["n"].(int64) * 2
			m["updated_ms"] = time.Now().UnixMilli()
		}, true},
		{"counter incremented", 41, func(m map[string]any) {
			m["n"] = m["n"].(int64) + 1
			m["updated_ms"] = time.Now().UnixMilli()
		}, true},
		{"count near now in seconds incremented", time.Now().Unix() - 3*3600, func(m map[string]any) {
			m["n"] = m["n"].(int64) + 1
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := retryingSaver(t, c.seed, false, c.do)
			if !c.dup {
				assert.Empty(t, codes(rep))
				return
			}
			for _, s := range []string{"duplicate_delivery/sequential", "duplicate_delivery/concurrent", "lost_acknowledgement/save#1"} {
				found := false
				for _, f := range rep.Findings {
					found = found || f.Scenario == s && f.Code == CodeDuplicateWrite
				}
				assert.True(t, found, "no duplicate_write in %s: %v", s, codes(rep))
			}
		})
	}
}

// Within a run a moment counts, as a number as it does as a date-time
// string: a repeat of a write declared idempotent that sets a value it
// has and stamps updated_at again changed the world, with the same
// findings in the same scenarios whether the stamp is text or Unix
// milliseconds.
func TestARestampWithinARunCountsAsForDateTimeStrings(t *testing.T) {
	restamp := func(stamp func() any) func(m map[string]any) {
		return func(m map[string]any) {
			m["n"] = int64(7)
			time.Sleep(2 * time.Millisecond) // another millisecond than the last stamp
			m["updated_at"] = stamp()
		}
	}
	text := retryingSaver(t, 7, true, restamp(func() any { return time.Now().UTC().Format(time.RFC3339Nano) }))
	number := retryingSaver(t, 7, true, restamp(func() any { return time.Now().UnixMilli() }))
	assert.NotEmpty(t, codes(text), "a restamp within a run read as no change")
	assert.Equal(t, codes(text), codes(number))
}
