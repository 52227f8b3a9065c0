package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tool that calls a tool with context.Background() (a slip inside a
// tool) makes the inner call inside its own, on its goroutine: the inner
// call's outer call is the one its goroutine runs, as the context would
// have said. It used to be taken for a sibling that overlapped the outer
// call: a keyed charge inside a checkout the agent retries was a false
// duplicate_write (State saw no execution change the world), and the
// agent a parallel batch. The verdict is now the one of the same code
// passing its ctx, with a context_detached warning; a naive inner charge
// is still caught.
func TestToolCallingAToolWithoutItsContextMakesANestedCall(t *testing.T) {
	checkout := &Op{Name: "checkout", Kind: KindWrite, Params: []string{"order"}}
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	for _, c := range []struct {
		name     string
		detached bool
		keyed    bool
	}{
		{"ctx, keyed", false, true},
		{"background, keyed", true, true},
		{"background, naive", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &kvWorld{}
			agent := func(ctx context.Context) error {
				do := func() error {
					return traced(ctx, checkout, []any{"o-1"}, []any{"o-1"}, func(ctx context.Context) error {
						inner := ctx
						if c.detached {
							inner = context.Background()
						}
						return traced(inner, charge, []any{"o-1"}, []any{"o-1"}, func(context.Context) error {
							return w.do(func(m map[string]any) {
								n, _ := m["o-1"].(int)
								if c.keyed {
									n = 0
								}
								m["o-1"] = n + 1
							})
						})
					})
				}
				if err := do(); err != nil {
					return do()
				}
				return nil
			}
			rep := runOn(t, w, nil, agent, OnlyScenario(ScenarioLostAck+"/checkout#1"))
			require.NotNil(t, rep.Baseline)
			for _, o := range rep.Baseline.Trace.Ops {
				if o.Name == "charge" {
					assert.Equal(t, "1:checkout#1", o.Parent, "the inner call's outer call")
				}
			}
			require.Len(t, rep.Results, 1)
			var codes []string
			for _, f := range rep.Results[0].Findings {
				codes = append(codes, f.Code)
			}
			got := strings.Join(codes, " ")
			assert.Equal(t, !c.keyed, strings.Contains(got, CodeDuplicateWrite), got)
		})
	}
}
