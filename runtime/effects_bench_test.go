package runtime

import (
	"context"
	"testing"
)

// BenchmarkEffects is the whole fault suite of the to-do agent (two writes,
// one appending and one setting) judged three ways: by count (no
// declaration, no State), by the idempotent declaration, and by a State
// snapshot of the list around every write. scripts/bench/effects.sh prints
// the table.
func BenchmarkEffects(b *testing.B) {
	for _, c := range []struct {
		name  string
		set   *Op
		state bool
	}{
		{"count", setOp(false), false},
		{"declared", setOp(true), false},
		{"state", setOp(false), true},
	} {
		b.Run(c.name, func(b *testing.B) {
			a := &todoAgent{add: addOp(false), set: c.set}
			opts := []Option{Setup(func(context.Context) error { a.list = &todoList{}; return nil })}
			if c.state {
				opts = append(opts, State(func() any { return a.list.snapshot() }))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(context.Background(), "todo", a.run, opts...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
