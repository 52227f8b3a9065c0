package agentidemeino_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/cloudwego/eino/schema"
)

// An agent that runs its Eino graph with context.Background() instead of
// its own: the tool calls reach the middleware through Eino's ToolsNode,
// and context_detached names the line of the agent that dropped its
// context (here, the Generate call), not a line of the middleware or of
// Eino.
func TestDetachedContextNamesTheAgentsLine(t *testing.T) {
	w := newWorld()
	agent := func(ctx context.Context) error {
		a, err := w.react(ctx, false, false)
		if err != nil {
			return err
		}
		_, err = a.Generate(context.Background(), []*schema.Message{schema.UserMessage("File the invoice for order ORD-9.")}) // the bug: the agent's ctx is dropped here
		return err
	}
	rep := testkit.Run(t, agent, append(w.options(), testkit.NoSummary())...)
	var msgs []string
	for _, f := range rep.Baseline.Findings {
		if f.Code == runtime.CodeContextDetached {
			msgs = append(msgs, f.Message)
		}
	}
	if len(msgs) == 0 {
		t.Fatalf("no context_detached in the baseline: %v", rep.Baseline.Findings)
	}
	for _, m := range msgs {
		if !strings.Contains(m, "detached_test.go:25") {
			t.Errorf("context_detached does not name the agent's line detached_test.go:25: %s", m)
		}
	}
}
