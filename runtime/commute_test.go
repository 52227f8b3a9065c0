package runtime

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two writes to one entity in flight together are concurrent writes (the
// one to land last decides what stays) unless the exploration shows
// otherwise: with State, where every schedule ran each of them last and
// all ended in the same world, they commute (two tags added to one post),
// and the finding, which the exploration disproved, becomes a note. Writes
// whose order shows in the world (two titles set on one post) keep it, and
// so do commuting writes where nothing shows the world (no State: an
// Outcome may leave out what they race on), and two due dates set in
// parallel (moments a call was given are compared as they are). (Found
// by red-team: parallel add_tag calls on one post; by review: the due
// dates.)
func TestWritesThatCommuteAreNoConcurrentWrites(t *testing.T) {
	addTag := &Op{Name: "add_tag", Kind: KindWrite, Params: []string{"post", "tag"}}
	setTitle := &Op{Name: "set_title", Kind: KindWrite, Params: []string{"post", "title"}, Idempotent: true}
	w := &kvWorld{}
	call := func(op *Op, post, v string, do func(m map[string]any)) func(context.Context) error {
		return func(ctx context.Context) (err error) {
			args := []any{post, v}
			id := args[:1]
			if op == addTag {
				id = args
			}
			c, _ := Begin(ctx, op, args, id, args[:1])
			if err := c.Start(); err != nil {
				return err
			}
			defer c.Recover(&err)
			return c.Finish(w.do(do))
		}
	}
	tag := func(v string) func(context.Context) error {
		return call(addTag, "p1", v, func(m map[string]any) {
			tags, _ := m["tags"].([]string)
			if !slices.Contains(tags, v) {
				tags = append(tags, v)
				slices.Sort(tags)
			}
			m["tags"] = tags
		})
	}
	title := func(v string) func(context.Context) error {
		return call(setTitle, "p1", v, func(m map[string]any) { m["title"] = v })
	}
	commuted := func(rep *Report) bool {
		for _, res := range rep.Results {
			for _, n := range res.Trace.Notes {
				if strings.Contains(n, "they commute") {
					return true
				}
			}
		}
		return false
	}
	t.Run("tags, State", func(t *testing.T) {
		rep := runOn(t, w, nil, parallelTurn([]func(context.Context) error{tag("go"), tag("agents")}, false))
		require.True(t, rep.BaselineSucceeded)
		assert.False(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
		assert.True(t, commuted(rep), "no schedule's trace says the writes commute")
	})
	t.Run("titles, State", func(t *testing.T) {
		rep := runOn(t, w, nil, parallelTurn([]func(context.Context) error{title("Hello"), title("World")}, false))
		require.True(t, rep.BaselineSucceeded)
		assert.True(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
		assert.False(t, commuted(rep))
	})
	t.Run("due dates, State", func(t *testing.T) {
		// Moments the calls were given are what they race on: two due
		// dates, the one to land last stays.
		due := func(v string) func(context.Context) error {
			return call(setTitle, "p1", v, func(m map[string]any) { m["due"] = v })
		}
		rep := runOn(t, w, nil, parallelTurn([]func(context.Context) error{due("2024-05-01T10:00:00Z"), due("2024-06-01T10:00:00Z")}, false))
		require.True(t, rep.BaselineSucceeded)
		assert.True(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
		assert.False(t, commuted(rep))
	})
	t.Run("tags, Outcome only", func(t *testing.T) {
		// An Outcome may leave out what the calls race on: without
		// State, nothing shows the world.
		rep, err := Run(context.Background(), t.Name(), parallelTurn([]func(context.Context) error{tag("go"), tag("agents")}, false),
			Setup(func(context.Context) error { w.m = map[string]any{}; return nil }),
			Outcome(func() any { return "done" }))
		require.NoError(t, err)
		assert.True(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
	})
	t.Run("tags, no State", func(t *testing.T) {
		rep, err := Run(context.Background(), t.Name(), parallelTurn([]func(context.Context) error{tag("go"), tag("agents")}, false),
			Setup(func(context.Context) error { w.m = map[string]any{}; return nil }))
		require.NoError(t, err)
		assert.True(t, rep.Has(CodeConcurrentWritesEntity), "nothing showed the world, and the finding went: %v", codes(rep))
	})
}

// Two ops that write one identity in one turn: set_status(o1, shipped)
// beside cancel_order(o1), each declaring the order as its identity. The
// one to land last decides the order's status: concurrent writes, with
// State (the schedules end in other worlds) and without. Two ops of one
// identity that write other fields of it commute, and State shows it.
// (Found by red-team: both were passed as SAFE, the same identity taken
// for two executions of one call.)
func TestTwoOpsWritingOneIdentityAreConcurrentWrites(t *testing.T) {
	setStatus := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"order", "status"}, Idempotent: true}
	cancel := &Op{Name: "cancel_order", Kind: KindWrite, Params: []string{"order"}, Idempotent: true}
	addNote := &Op{Name: "add_note", Kind: KindWrite, Params: []string{"order", "note"}, Idempotent: true}
	w := &kvWorld{}
	call := func(op *Op, args []any, do func(m map[string]any)) func(context.Context) error {
		return func(ctx context.Context) (err error) {
			c, _ := Begin(ctx, op, args, args[:1], nil)
			if err := c.Start(); err != nil {
				return err
			}
			defer c.Recover(&err)
			return c.Finish(w.do(do))
		}
	}
	ship := call(setStatus, []any{"o1", "shipped"}, func(m map[string]any) { m["status"] = "shipped" })
	cancelIt := call(cancel, []any{"o1"}, func(m map[string]any) { m["status"] = "cancelled" })
	note := call(addNote, []any{"o1", "fragile"}, func(m map[string]any) { m["note"] = "fragile" })
	t.Run("status and cancel, State", func(t *testing.T) {
		rep := runOn(t, w, nil, parallelTurn([]func(context.Context) error{ship, cancelIt}, false))
		require.True(t, rep.BaselineSucceeded)
		assert.True(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
	})
	t.Run("status and cancel, no State", func(t *testing.T) {
		rep, err := Run(context.Background(), t.Name(), parallelTurn([]func(context.Context) error{ship, cancelIt}, false),
			Setup(func(context.Context) error { w.m = map[string]any{}; return nil }))
		require.NoError(t, err)
		assert.True(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
	})
	t.Run("status and note, State", func(t *testing.T) {
		rep := runOn(t, w, nil, parallelTurn([]func(context.Context) error{ship, note}, false))
		require.True(t, rep.BaselineSucceeded)
		assert.False(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
	})
}

// Two notes a sink numbers from a counter, added to one post in one turn:
// in one order the first note is row 1, in the other row 2. The schedules
// end in the same world but for the numbers the sink handed out, which no
// call was given: they commute, as two tags do, and the finding is
// dropped. (Found by red-team: INSERT OR IGNORE into a table with an
// AUTOINCREMENT id, State reading the ids.)
func TestCreatesTheSinkNumbersInOrderCommute(t *testing.T) {
	addNote := &Op{Name: "add_note", Kind: KindWrite, Params: []string{"post", "text"}}
	w := &kvWorld{}
	note := func(text string) func(context.Context) error {
		return func(ctx context.Context) (err error) {
			args := []any{"p1", text}
			c, _ := Begin(ctx, addNote, args, args, args[:1])
			if err := c.Start(); err != nil {
				return err
			}
			defer c.Recover(&err)
			return c.Finish(w.do(func(m map[string]any) {
				rows, _ := m["notes"].([]any)
				m["notes"] = append(rows, map[string]any{"id": len(rows) + 1, "post": "p1", "text": text})
			}))
		}
	}
	table := func(m map[string]any) { m["notes"] = []any{} } // as a SELECT gives an empty table
	rep := runOn(t, w, table, parallelTurn([]func(context.Context) error{note("called"), note("emailed")}, false))
	require.True(t, rep.BaselineSucceeded)
	assert.False(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
}
