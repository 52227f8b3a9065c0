package runtime

import (
	"context"
	"strings"
	"testing"
)

// TestIdentityAndEntityRecorded: the canonical identity and entity that
// Begin stores in the run's byte blocks are what the trace shows, for
// many calls (several blocks), and an entity that cannot be encoded
// leaves a write without one (it does not fall back to the identity).
func TestIdentityAndEntityRecorded(t *testing.T) {
	op := &Op{Name: "put", Kind: KindWrite, Params: []string{"key"}}
	long := strings.Repeat("k", 300) // more than a block's share: its own string
	tr, err := RunTraced(context.Background(), "ids", func(ctx context.Context) error {
		for i := 0; i < 500; i++ {
			key := string(rune('a'+i%26)) + strings.Repeat("x", i%40)
			c, _ := Begin(ctx, op, []any{key}, []any{key}, nil)
			c.Finish(nil)
		}
		c, _ := Begin(ctx, op, []any{long}, []any{long}, []any{"order", 7})
		c.Finish(nil)
		c, _ = Begin(ctx, op, []any{"k"}, []any{"k"}, []any{func() {}})
		c.Finish(nil)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Ops) != 502 {
		t.Fatalf("%d calls recorded, want 502", len(tr.Ops))
	}
	for i, o := range tr.Ops[:500] {
		want := `"` + string(rune('a'+i%26)) + strings.Repeat("x", i%40) + `"`
		if o.Identity != want || o.Entity != want {
			t.Fatalf("call %d: identity %q, entity %q, want %q for both", i, o.Identity, o.Entity, want)
		}
	}
	if o := tr.Ops[500]; o.Identity != `"`+long+`"` || o.Entity != `["order",7]` {
		t.Errorf("long identity: got identity of %d bytes, entity %q", len(o.Identity), o.Entity)
	}
	if o := tr.Ops[501]; o.Identity != `"k"` || o.Entity != "" {
		t.Errorf("unencodable entity: identity %q, entity %q; want \"k\" and no entity", o.Identity, o.Entity)
	}
}
