package gosdk_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type setStatusIn struct {
	Order  string `json:"order_id"`
	Status string `json:"status"`
}

// annotatedStatusAgent serves set_status, annotated idempotentHint, with
// the middleware given tools, and returns an agent that connects a session
// per invocation and sets order o-1 shipped.
func annotatedStatusAgent(tools agentidemmcp.Tools) func(context.Context) error {
	var mu sync.Mutex
	status := map[string]string{}
	s := mcp.NewServer(&mcp.Implementation{Name: "orders", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "set_status", Annotations: &mcp.ToolAnnotations{IdempotentHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in setStatusIn) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			status[in.Order] = in.Status
			mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	s.AddReceivingMiddleware(gosdk.Middleware(tools))
	return func(ctx context.Context) error {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := s.Connect(context.WithoutCancel(ctx), st, nil)
		if err != nil {
			return err
		}
		defer ss.Wait()
		c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
		c.AddSendingMiddleware(gosdk.Propagate())
		cs, err := c.Connect(context.WithoutCancel(ctx), ct, nil)
		if err != nil {
			ss.Close()
			return err
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "set_status", Arguments: map[string]any{"order_id": "o-1", "status": "shipped"}})
		if err == nil && res.IsError {
			err = errors.New("set_status answered isError")
		}
		return err
	}
}

// TestMisspeltKeyOfAnAnnotatedToolFailsTheSuite: as with mcp-go
// (mcpgo's test of the same name), a key "setStatus" for set_status,
// which its idempotentHint traces anyway, went unremarked: the call was
// traced by its annotations alone, without the key's Spec. It is now
// refused while the suite runs, naming the key and the tool; with the key
// spelt right the suite passes, and production is untouched.
func TestMisspeltKeyOfAnAnnotatedToolFailsTheSuite(t *testing.T) {
	agent := annotatedStatusAgent(agentidemmcp.Tools{"setStatus": agentidemmcp.Write(agentidemmcp.Identity("order_id"))})
	rep := testkit.Run(t, agent, testkit.NoSummary())
	const want = `Tools key "setStatus" names no tool of this server (did you mean "set_status"?): call of set_status refused in a test, where its annotations alone would trace it`
	if rep.Safe || !strings.Contains(rep.BaselineFailure, want) {
		t.Fatalf("safe %v, baseline failure %q; want the suite failed with %s", rep.Safe, rep.BaselineFailure, want)
	}
	if err := agent(context.Background()); err != nil {
		t.Errorf("no run active: the call must go through, got %v", err)
	}

	fixed := annotatedStatusAgent(agentidemmcp.Tools{"set_status": agentidemmcp.Write(agentidemmcp.Identity("order_id"))})
	if rep := testkit.Run(t, fixed, testkit.NoSummary()); !rep.Safe {
		t.Fatalf("the key spelt right: baseline failure %q, findings %v", rep.BaselineFailure, rep.Findings)
	}
}
