package benchtool

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// TestWrapperTraces checks that the benchmarked wrapper is the real thing:
// it calls Put and, inside a run, records the call.
func TestWrapperTraces(t *testing.T) {
	s := NewStore()
	if err := s.PutTraced(context.Background(), "a", 1); err != nil {
		t.Fatal(err)
	}
	tr, err := runtime.RunTraced(context.Background(), "bench", func(ctx context.Context) error {
		return s.PutTraced(ctx, "b", 2)
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2 {
		t.Errorf("store has %d keys, want 2", s.Len())
	}
	if len(tr.Ops) != 1 || tr.Ops[0].Name != "Store.Put" || tr.Ops[0].Identity != `"b"` || tr.Ops[0].Status != runtime.StatusSuccess {
		t.Errorf("trace = %+v, want one successful Store.Put with identity \"b\"", tr.Ops)
	}
}

// TestConcurrentWrappers calls the generated wrapper from 64 goroutines in
// one run (run it with -race): every call is recorded once, with its own id
// and identity.
func TestConcurrentWrappers(t *testing.T) {
	const goroutines, calls = 64, 20
	s := NewStore()
	tr, err := runtime.RunTraced(context.Background(), "bench", func(ctx context.Context) error {
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range calls {
					if err := s.PutTraced(ctx, fmt.Sprintf("g%d-%d", g, i), i); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Ops) != goroutines*calls || s.Len() != goroutines*calls {
		t.Fatalf("recorded %d calls, store has %d keys, want %d", len(tr.Ops), s.Len(), goroutines*calls)
	}
	ids, identities := map[string]bool{}, map[string]bool{}
	for _, op := range tr.Ops {
		if ids[op.ID] || identities[op.Identity] {
			t.Fatalf("call %s (identity %s) recorded twice", op.ID, op.Identity)
		}
		ids[op.ID], identities[op.Identity] = true, true
	}
}
