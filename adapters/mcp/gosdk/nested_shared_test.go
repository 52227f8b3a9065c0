package gosdk_test

import (
	"context"
	"maps"
	"sync"
	"testing"

	mcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The help desk again, written the way most agents are: one client
// session, connected by the agent with its own context, that close_all's
// handler also uses to call set_status. The server handles every call of
// the session on a context derived from the agent's, which carries the
// run; close_all's context comes with the nested calls as the client's
// (Propagate). Before, the server's context was asked first: the nested
// calls were the agent's own, a batch with close_all, and a
// partial_batch_failure was planned for each of the three.
func TestToolCallingAToolOverTheAgentsSession(t *testing.T) {
	var mu sync.Mutex
	status := map[string]string{}
	// Each delivery's client session, by the server session it talks to:
	// close_all calls through the session of the delivery it serves
	// (duplicate_delivery/concurrent runs two at once).
	var sessMu sync.Mutex
	sessions := map[*sdk.ServerSession]*sdk.ClientSession{}
	srv := sdk.NewServer(&sdk.Implementation{Name: "desk", Version: "1.0.0"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "set_status"}, func(ctx context.Context, _ *sdk.CallToolRequest, in statusIn) (*sdk.CallToolResult, any, error) {
		mu.Lock()
		status[in.ID] = in.Status
		mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "close_all"}, func(ctx context.Context, req *sdk.CallToolRequest, in idsIn) (*sdk.CallToolResult, any, error) {
		sessMu.Lock()
		cs := sessions[req.Session]
		sessMu.Unlock()
		for _, id := range []string{"t1", "t2"} {
			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "set_status", Arguments: map[string]any{"id": id, "status": "closed"}}); err != nil {
				return nil, nil, err
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "closed"}}}, nil, nil
	})
	srv.AddReceivingMiddleware(gosdk.Middleware(mcp.Tools{
		"set_status": mcp.Write(mcp.Identity("id", "status"), mcp.Idempotent(), mcp.After("close_all")),
		"close_all":  mcp.Write(mcp.Identity("ids"), mcp.Idempotent()),
	}))
	agent := func(ctx context.Context) error {
		st, ct := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			return err
		}
		defer ss.Wait()
		client := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, nil)
		client.AddSendingMiddleware(gosdk.Propagate())
		cs, err := client.Connect(ctx, ct, nil)
		if err != nil {
			return err
		}
		defer cs.Close()
		sessMu.Lock()
		sessions[ss] = cs
		sessMu.Unlock()
		_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "close_all", Arguments: map[string]any{"ids": "t1,t2"}})
		return err
	}
	rep := testkit.Run(t, agent, testkit.NoSummary(),
		testkit.Setup(func(context.Context) error { mu.Lock(); status = map[string]string{}; mu.Unlock(); return nil }),
		testkit.State(func() any { mu.Lock(); defer mu.Unlock(); return maps.Clone(status) }))
	var closeID string
	for _, o := range rep.Baseline.Trace.Ops {
		if o.Name == "close_all" {
			closeID = o.ID
		}
	}
	nested := 0
	for _, o := range rep.Baseline.Trace.Ops {
		if o.Name == "set_status" {
			nested++
			if o.Parent != closeID || o.Batch != 0 {
				t.Errorf("%s, made inside %s: parent %q, batch %d", o.ID, closeID, o.Parent, o.Batch)
			}
		}
	}
	if nested != 2 {
		t.Errorf("%d set_status calls, want 2", nested)
	}
	for _, r := range rep.Results {
		if r.Kind == runtime.ScenarioPartialBatch {
			t.Errorf("%s planned: no two calls of the agent were in flight together", r.Scenario)
		}
	}
	for _, f := range rep.Problems {
		t.Errorf("%s: %s", f.Code, f.Message)
	}
}
