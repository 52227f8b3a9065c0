package runtime

import (
	"context"
	"maps"
	"sync"
	"testing"
)

// Two deliveries at once of an agent whose one write is an upsert, judged
// by State: whichever delivery's write executes second is the repeat, and
// it changed nothing. Before, the repeat was whichever counted itself
// second, even when it executed first (preempted between counting and
// opening its cluster): it was then judged alone as the write that
// changed the world, a false duplicate_write (seen in CI under -race).
// The race is rare (a preemption between two lines); this loop of 200
// suites is a net for it, not a proof.
func TestConcurrentUpsertIsNeverADuplicate(t *testing.T) {
	for range 200 {
		var mu sync.Mutex
		var rows map[string]string
		agent := func(ctx context.Context) error {
			return tracedPut(ctx, func(k string) {
				mu.Lock()
				rows[k] = "v"
				mu.Unlock()
			}, "k")
		}
		s := NewSuite("upsert", agent, OnlyScenario(ScenarioDuplicateConcurrent),
			Setup(func(context.Context) error { rows = map[string]string{}; return nil }),
			State(func() any { mu.Lock(); defer mu.Unlock(); return maps.Clone(rows) }))
		endSuite(t, s)
		if _, err := s.Baseline(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, sc := range s.Plan() {
			res, err := s.RunScenario(context.Background(), sc)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				if f.Code == CodeDuplicateWrite {
					t.Fatalf("%s: false %s: %s", sc.Name, f.Code, f.Message)
				}
			}
		}
	}
}
