package testkit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// notebook is the world of the example: rows set by key, and entries
// appended.
type notebook struct {
	mu      sync.Mutex
	rows    map[string]string
	entries []string
}

// Put sets the row key to v: a repeat changes nothing (an upsert).
//
//agentidem:write identity=key name=put
func (n *notebook) Put(ctx context.Context, key, v string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.rows[key] = v
	return nil
}

// Post appends entry: a repeat appends it again.
//
//agentidem:write identity=key name=post
func (n *notebook) Post(ctx context.Context, key, entry string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.entries = append(n.entries, entry)
	return nil
}

// Snapshot is the notebook's observable state: plain data, compared by
// value.
func (n *notebook) Snapshot() any {
	n.mu.Lock()
	defer n.mu.Unlock()
	return map[string]any{"rows": n.rows, "entries": slices.Clone(n.entries)}
}

// PutTraced and PostTraced are what agentidem-gen writes from the
// annotations above (go generate; written out here so that the example
// is whole): each call is recorded, and the suite injects its faults.
var (
	putOp  = &runtime.Op{Name: "put", Kind: runtime.KindWrite, Params: []string{"key", "v"}}
	postOp = &runtime.Op{Name: "post", Kind: runtime.KindWrite, Params: []string{"key", "entry"}}
)

func (n *notebook) PutTraced(ctx context.Context, key, v string) error {
	return traced(ctx, putOp, key, v, n.Put)
}

func (n *notebook) PostTraced(ctx context.Context, key, entry string) error {
	return traced(ctx, postOp, key, entry, n.Post)
}

func traced(ctx context.Context, op *runtime.Op, key, v string, tool func(context.Context, string, string) error) (err error) {
	if !runtime.Enabled() {
		return tool(ctx, key, v)
	}
	c, cctx := runtime.Begin(ctx, op, []any{key, v}, []any{key}, nil)
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	err = tool(cctx, key, v)
	if lost := c.Finish(err); lost != nil {
		return lost
	}
	return err
}

// exampleT is a testkit.TB that prints failures; in a test, pass t.
type exampleT struct{}

func (exampleT) Helper()               {}
func (exampleT) Name() string          { return "TestNotebook" }
func (exampleT) Logf(string, ...any)   {}
func (exampleT) Errorf(string, ...any) {}

// State judges each write by what it did to the world. The agent puts a
// row (an upsert) and posts an entry (an append), each retried once after
// an error: the retried put left the notebook as it was and is absorbed;
// the retried post added a second entry, and the finding says so.
func ExampleState() {
	var nb *notebook
	agent := func(ctx context.Context) error {
		for _, call := range []func() error{
			func() error { return nb.PutTraced(ctx, "row-1", "hello") },
			func() error { return nb.PostTraced(ctx, "entry-1", "hello") },
		} {
			if err := call(); err != nil {
				if err := call(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	rep := testkit.Run(exampleT{}, agent,
		testkit.Setup(func(context.Context) error { nb = &notebook{rows: map[string]string{}}; return nil }),
		testkit.State(func() any { return nb.Snapshot() }),
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
