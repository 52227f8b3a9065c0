package benchtool

import (
	"context"
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
