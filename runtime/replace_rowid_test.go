package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prefsTable is SQLite's prefs(id INTEGER PRIMARY KEY, user, key, value,
// UNIQUE(user, key)) as State reads it (SELECT * ORDER BY id): set writes
// with INSERT OR REPLACE, which deletes the row of (user, key) and inserts
// it again under the next rowid; log inserts a row each time (no unique
// key: the buggy twin).
type prefsTable struct {
	mu   sync.Mutex
	rows []map[string]any
	next int
}

func (p *prefsTable) reset() {
	p.mu.Lock()
	p.rows, p.next = nil, 0
	p.mu.Unlock()
}

func (p *prefsTable) write(user, key, value string, replace bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if replace {
		for i, r := range p.rows {
			if r["user"] == user && r["key"] == key {
				p.rows = append(p.rows[:i:i], p.rows[i+1:]...)
				break
			}
		}
	}
	p.next++
	p.rows = append(p.rows, map[string]any{"id": p.next, "user": user, "key": key, "value": value})
}

func (p *prefsTable) state() any {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]any, len(p.rows))
	for i, r := range p.rows {
		out[i] = map[string]any{"id": r["id"], "user": r["user"], "key": r["key"], "value": r["value"]}
	}
	return out
}

// An agent sets two preferences, retrying each once on an error, through
// an INSERT OR REPLACE: a repeat leaves one row per (user, key) with the
// same value, under a new rowid. That is no second effect: the repeat is
// absorbed (it was a duplicate_write, "prefs[0].id: 1 → 2", in every run of
// the red team's SQLite probe). A table without the unique key gets a row
// more from each repeat, and is caught.
func TestInsertOrReplaceUnderANewRowidIsNoDuplicate(t *testing.T) {
	set := &Op{Name: "set_pref", Kind: KindWrite, Params: []string{"user", "key", "value"}}
	for _, c := range []struct {
		name    string
		replace bool
	}{{"insert or replace", true}, {"plain insert", false}} {
		t.Run(c.name, func(t *testing.T) {
			p := &prefsTable{}
			agent := func(ctx context.Context) error {
				for _, kv := range [][2]string{{"theme", "dark"}, {"lang", "fr"}} {
					var err error
					for range 2 {
						err = traced(ctx, set, []any{"u1", kv[0], kv[1]}, []any{"u1", kv[0]}, func(context.Context) error {
							p.write("u1", kv[0], kv[1], c.replace)
							return nil
						})
						if err == nil {
							break
						}
					}
					if err != nil {
						return err
					}
				}
				return nil
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error { p.reset(); return nil }),
				State(p.state))
			require.NoError(t, err)
			var dups []string
			renamed := false
			for _, r := range rep.Results {
				for _, f := range r.Findings {
					if f.Code == CodeDuplicateWrite {
						dups = append(dups, r.Scenario+": "+f.Message)
					}
				}
				renamed = renamed || strings.Contains(strings.Join(r.Trace.Notes, "\n"), "under a new id")
			}
			if c.replace {
				assert.Empty(t, dups, "an INSERT OR REPLACE repeated is no duplicate")
				assert.True(t, rep.Safe, "the report's verdict")
				assert.True(t, renamed, "no note says a repeat only gave a row a new id")
			} else {
				assert.NotEmpty(t, dups, "a plain insert repeated is a duplicate")
				assert.False(t, rep.Safe, "the report's verdict")
			}
		})
	}
}
