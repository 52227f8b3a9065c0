package runtime

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"
)

// An agent whose writes are upserts, judged by State and delivered twice at
// once: whichever write of an identity executes second is the repeat, and
// it changed nothing. Two ways this was a false duplicate_write:
//   - the repeat was whichever write counted itself second, even when it
//     executed first (preempted between counting and opening its
//     cluster): it was judged alone as the write that changed the world
//     (seen in CI under -race);
//   - with two parallel writes in each delivery, the first executions
//     overlapped, so neither had a state change of its own, and a repeat
//     that ran alone and changed nothing was counted as a duplicate.
//
// The agent whose writes increment a count makes real duplicates, and is
// caught: when each delivery's two writes overlapped, what the cluster of
// two increments left ("added key k2" = 2) was taken for what one left in
// the baseline ("added key k2" = 1), and ~1 suite in 10 passed. The races
// are rare; 100 suites per case are a net, not a proof.
func TestConcurrentUpsertIsNeverADuplicate(t *testing.T) {
	for _, c := range []struct {
		name     string
		parallel bool
		adds     bool // each write increments a count: a real duplicate
	}{
		{"one upsert", false, false},
		{"parallel upserts", true, false},
		{"parallel increments", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range 100 {
				var mu sync.Mutex
				var rows map[string]string
				put := func(k string) {
					mu.Lock()
					defer mu.Unlock()
					if c.adds {
						n, _ := strconv.Atoi(rows[k])
						rows[k] = strconv.Itoa(n + 1)
						return
					}
					rows[k] = "v"
				}
				agent := func(ctx context.Context) error {
					if !c.parallel {
						return tracedPut(ctx, put, "k")
					}
					var g errgroup.Group
					g.Go(func() error { return tracedPut(ctx, put, "k") })
					g.Go(func() error { return tracedPut(ctx, put, "k2") })
					return g.Wait()
				}
				s := NewSuite("upsert", agent, OnlyScenario(ScenarioDuplicateConcurrent),
					Setup(func(context.Context) error { rows = map[string]string{}; return nil }),
					State(func() any { mu.Lock(); defer mu.Unlock(); return maps.Clone(rows) }))
				endSuite(t, s)
				if _, err := s.Baseline(context.Background()); err != nil {
					t.Fatal(err)
				}
				dup := false
				for _, sc := range s.Plan() {
					res, err := s.RunScenario(context.Background(), sc)
					if err != nil {
						t.Fatal(err)
					}
					for _, f := range res.Findings {
						if f.Code == CodeDuplicateWrite {
							dup = true
							if !c.adds {
								t.Fatalf("%s: false %s: %s", sc.Name, f.Code, f.Message)
							}
						}
					}
				}
				if c.adds && !dup {
					t.Fatalf("the agent that increments a count per write was not caught")
				}
			}
		})
	}
}

// Compared whole (limit -1), a change names the values of the keys it
// added or removed: described in words, an increment done once and twice
// both read "added key".
func TestChangesComparedWithTheirValues(t *testing.T) {
	for _, c := range []struct {
		b0, a0, b1, a1 string
		want           bool
	}{
		{`{}`, `{"k":"1"}`, `{"j":"1"}`, `{"j":"1","k":"1"}`, true}, // one upsert, another state around it
		{`{}`, `{"k":"1"}`, `{}`, `{"k":"2"}`, false},               // one increment, two
		{`{"k":"1"}`, `{}`, `{"k":"2"}`, `{}`, false},               // removed another value
		{`{}`, `{"k":"1"}`, `{}`, `{"k":"1","j":"1"}`, false},       // another part changed too
	} {
		if got := describeChange(c.b0, c.a0, -1) == describeChange(c.b1, c.a1, -1); got != c.want {
			t.Errorf("%s→%s against %s→%s: same %v, want %v", c.b0, c.a0, c.b1, c.a1, got, c.want)
		}
	}
	if got := describeChange(`{}`, `{"k":"1"}`, 200); got != `state: added key "k"` {
		t.Errorf("for reading, an added key is named only: %q", got)
	}
}
