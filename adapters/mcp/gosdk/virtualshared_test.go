package gosdk_test

import (
	"context"
	"strings"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// VirtualTime with a client session connected before the suite: the
// session's goroutines run outside any bubble, and one that answered a
// call made in the bubble sent on the bubble's channel, which ends the test
// binary (fatal error: send on synctest channel from outside bubble; 16 of
// 20 runs, some of which then hung). The baseline, on real time, saw the
// calls go through the transport (agentidemmcp.Send), and the suite stays
// on real time, and says why in the baseline's notes.
func TestVirtualTimeWithASessionConnectedBeforeTheSuiteStaysOnRealTime(t *testing.T) {
	type openIn struct {
		Ref string `json:"ref"`
	}
	var d *ticketDesk
	s := mcp.NewServer(&mcp.Implementation{Name: "desk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "open_ticket"}, func(ctx context.Context, _ *mcp.CallToolRequest, in openIn) (*mcp.CallToolResult, any, error) {
		d.open(in.Ref, in.Ref)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "opened"}}}, nil, nil
	})
	s.AddReceivingMiddleware(gosdk.Middleware(agentidemmcp.Tools{"open_ticket": agentidemmcp.Write(agentidemmcp.Identity("ref"))}))
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	c.AddSendingMiddleware(gosdk.Propagate())
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	agent := func(ctx context.Context) error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_ticket", Arguments: map[string]any{"ref": "ORD-9"}})
		if err != nil {
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_ticket", Arguments: map[string]any{"ref": "ORD-9"}})
		}
		return err
	}
	rep := testkit.Run(t, agent, testkit.NoSummary(), testkit.VirtualTime(),
		testkit.Setup(func(context.Context) error { d = &ticketDesk{requests: map[string]bool{}}; return nil }),
		testkit.State(func() any { return d.snapshot() }))
	if !rep.BaselineSucceeded {
		t.Fatalf("baseline: %s", rep.BaselineFailure)
	}
	for _, r := range rep.Results {
		if r.Clock != runtime.ClockReal {
			t.Errorf("%s ran on %s time", r.Scenario, r.Clock)
		}
	}
	if notes := strings.Join(rep.Baseline.Trace.Notes, "\n"); !strings.Contains(notes, "virtual time was asked for but the scenarios run on real time") {
		t.Errorf("the baseline does not say why it stays on real time: %q", notes)
	}
}
