package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// A tool that writes only through a tool it calls (submit_credit calls
// credit), whose sink answers a repeat from its idempotency record
// (MarkReplayed on the inner call): without State, each execution of the
// outer write counts, and a redelivery is a duplicate_write of
// submit_credit, which the annotations allow no other reading of. The
// finding says why it may be harmless (every write inside the repeat was
// replayed) and what to declare. Before, it read as any duplicate: "make
// the write idempotent at the sink", which it is.
func TestDuplicateOfAWriteWhoseInnerWritesReplayedSaysSo(t *testing.T) {
	submit := &Op{Name: "submit_credit", Kind: KindWrite, Params: []string{"user"}}
	credit := &Op{Name: "credit", Kind: KindWrite, Params: []string{"user"}}
	var (
		mu   sync.Mutex
		done map[string]bool
	)
	agent := func(ctx context.Context) error {
		return traced(ctx, submit, []any{"u1"}, []any{"u1"}, func(ctx context.Context) error {
			return traced(ctx, credit, []any{"u1"}, []any{"u1"}, func(ctx context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				if done["u1"] {
					MarkReplayed(ctx) // the sink's record answers the repeat
					return nil
				}
				done["u1"] = true
				return nil
			})
		})
	}
	rep, err := Run(context.Background(), "inner-replayed", agent, Setup(func(context.Context) error {
		mu.Lock()
		done = map[string]bool{}
		mu.Unlock()
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	var msg string
	for _, f := range rep.Findings {
		if f.Code == CodeDuplicateWrite && f.Ops[0] == "submit_credit" && f.Message != "" {
			msg = f.Message
			break
		}
		if f.Code == CodeDuplicateWrite && f.Ops[0] == "credit" {
			t.Fatalf("the replayed inner write is a duplicate: %s", f.Message)
		}
	}
	if msg == "" {
		t.Fatal("no duplicate_write of submit_credit: without State, each execution of a write counts")
	}
	if !strings.Contains(msg, "every write made inside its repeats was replayed") {
		t.Fatalf("the finding does not say the inner writes were replayed: %s", msg)
	}
}
