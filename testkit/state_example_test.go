package testkit_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// State judges each write by what it did to the world. The agent puts a
// row (an upsert) and posts an entry (an append), each retried once after
// an error: the retried put left the ledger as it was and is absorbed; the
// retried post added a second entry, and the finding says so.
func ExampleState() {
	var l *tools.Ledger
	agent := func(ctx context.Context) error {
		for _, call := range []func() error{
			func() error { return l.PutTraced(ctx, "row-1", "hello") },
			func() error { return l.PostTraced(ctx, "entry-1", "hello") },
		} {
			if err := call(); err != nil {
				if err := call(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	rep := testkit.Run(printT{}, agent,
		testkit.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil }),
		testkit.State(func() any { return l.Snapshot() }),
		testkit.NoSummary(),
	)
	for _, p := range rep.Problems {
		_, change, _ := strings.Cut(p.Message, "changed the state: ")
		change, _, _ = strings.Cut(change, ";")
		fmt.Printf("%s %s: %s\n", p.Code, p.Ops[0], change)
	}
	// Output:
	// duplicate_write post: entries: 1 → 2 entries, added "hello"
}
