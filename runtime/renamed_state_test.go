package runtime

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A contacts table whose ids come from a counter Setup does not reset
// (SQLite's AUTOINCREMENT after DELETE). The agent upserts a contact and
// records a visit on it (visits++, no idempotency): two deliveries at once
// record two visits, a real duplicate. The baseline's contact is id 1 with
// 1 visit, the run's id 2 with 2 visits. Reading the run's states in the
// baseline's names (the renaming 1 → 2 learned from the calls, inverted)
// turned the doubled count into 1 as well, and the duplicate passed as
// SAFE; the attempt was withdrawn (found by review). With ids no count can
// equal (C-2), or a counter Setup resets, the duplicate is caught either
// way.
func TestACountEqualToARenamedIDIsNoName(t *testing.T) {
	for _, tc := range []struct {
		name    string
		idOf    func(n int) any
		resetID bool
	}{
		{"numeric ids from a shared counter", func(n int) any { return n }, false},
		{"string ids from a shared counter", func(n int) any { return "C-" + itoa(n) }, false},
		{"a counter Setup resets", func(n int) any { return n }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upsert := &Op{Name: "upsert_contact", Kind: KindWrite, Params: []string{"email"}, Idempotent: true}
			visit := &Op{Name: "add_visit", Kind: KindWrite, Params: []string{"contact"}}
			w := &kvWorld{}
			var (
				mu       sync.Mutex
				next     int
				inFlight atomic.Int32
			)
			rows := func(m map[string]any) []any { l, _ := m["contacts"].([]any); return l }
			// Two deliveries' visits are in flight together, as a
			// database's are: each waits a moment for the other.
			bothInFlight := func() {
				inFlight.Add(1)
				defer inFlight.Add(-1)
				for deadline := time.Now().Add(5 * time.Millisecond); inFlight.Load() < 2 && time.Now().Before(deadline); {
					time.Sleep(100 * time.Microsecond)
				}
			}
			agent := func(ctx context.Context) error {
				var id any
				err := traced(ctx, upsert, []any{"a@x"}, []any{"a@x"}, func(context.Context) error {
					return w.do(func(m map[string]any) {
						for _, r := range rows(m) {
							if r := r.(map[string]any); r["email"] == "a@x" {
								id = r["id"]
								return
							}
						}
						mu.Lock()
						next++
						id = tc.idOf(next)
						mu.Unlock()
						m["contacts"] = append(rows(m), map[string]any{"id": id, "email": "a@x", "visits": 0})
					})
				})
				if err != nil {
					return err
				}
				return traced(ctx, visit, []any{id}, []any{id}, func(context.Context) error {
					bothInFlight()
					return w.do(func(m map[string]any) {
						for _, r := range rows(m) {
							if r := r.(map[string]any); r["id"] == id {
								r["visits"] = r["visits"].(int) + 1
							}
						}
					})
				})
			}
			seed := func(map[string]any) {
				if tc.resetID {
					mu.Lock()
					next = 0
					mu.Unlock()
				}
			}
			rep := runOn(t, w, seed, agent, OnlyScenario(ScenarioDuplicateConcurrent))
			require.True(t, rep.BaselineSucceeded)
			assert.True(t, rep.Has(CodeDuplicateWrite), "two deliveries at once recorded two visits, yet: %v", codes(rep))
		})
	}
}
