package mcpgo_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/mcpgo"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// timeoutGateway moves the money, then times out confirming the charge:
// the tool answers isError although the charge landed. Keyed, it books an
// order once.
type timeoutGateway struct {
	mu      sync.Mutex
	charges []string
	keyed   bool
}

func (g *timeoutGateway) snapshot() any {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.charges)
}

// An agent that takes the gateway's timeout for done, delivered twice:
// each delivery's one charge lands and answers an error, and the world
// holds the charge twice. State saw both land; before, the suite left the
// last landed call of the order out and found no duplicate (red team rtL
// R0, adapters/mcp/rtl/failedeffect TestAlwaysErrState: INCONCLUSIVE with
// 0 unsafe, 10/10 runs).
func TestChargeThatLandsAndErrsEveryTimeIsADuplicateWhenRedelivered(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		var g *timeoutGateway
		s := server.NewMCPServer("pay", "1", server.WithToolHandlerMiddleware(mcpgo.Middleware(agentidemmcp.Tools{
			"charge": agentidemmcp.Write(agentidemmcp.Identity("order_id")),
		})))
		s.AddTool(mcp.NewTool("charge", mcp.WithString("order_id")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			id := req.GetString("order_id", "")
			g.mu.Lock()
			if !g.keyed || !slices.Contains(g.charges, id) {
				g.charges = append(g.charges, id)
			}
			g.mu.Unlock()
			return mcp.NewToolResultError("gateway timeout confirming charge " + id), nil
		})
		c, err := client.NewInProcessClient(s)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		if _, err := c.Initialize(context.Background(), init); err != nil {
			t.Fatal(err)
		}
		agent := func(ctx context.Context) error {
			req := mcp.CallToolRequest{}
			req.Params.Name = "charge"
			req.Params.Arguments = map[string]any{"order_id": "ORD-5"}
			_, err := c.CallTool(ctx, req)
			return agentidemmcp.Lost(err) // an isError answer is taken for done
		}
		rep := checked(t, testkit.Run(t, agent,
			testkit.Setup(func(context.Context) error { g = &timeoutGateway{keyed: keyed}; return nil }),
			testkit.State(func() any { return g.snapshot() })))
		var dups []string
		for _, f := range rep.Findings {
			if f.Code == runtime.CodeDuplicateWrite {
				dups = append(dups, f.Scenario)
			}
		}
		slices.Sort(dups)
		want := []string{runtime.ScenarioDuplicateConcurrent, runtime.ScenarioDuplicateSeq}
		if keyed {
			want = nil
		}
		if overlapped(rep, runtime.ScenarioDuplicateConcurrent) {
			// Two failed calls that overlapped have no window of their
			// own, and the deliveries' lockstep lets them overlap now and
			// then (3 to 8 runs in 20 under -race): the end says whether
			// they landed, and the concurrent delivery reports them as
			// the sequential one does (before, it missed them: CI167).
			t.Logf("keyed=%v: the concurrent delivery's calls overlapped", keyed)
		}
		if !slices.Equal(dups, want) {
			t.Errorf("keyed=%v: duplicate_write in %v, want %v", keyed, dups, want)
		}
		if rep.Safe == !keyed {
			t.Errorf("keyed=%v: safe=%v", keyed, rep.Safe)
		}
	}
}

// overlapped reports whether calls of the scenario named overlapped.
func overlapped(rep *runtime.Report, scenario string) bool {
	for _, r := range rep.Results {
		if r.Scenario != scenario || r.Trace == nil {
			continue
		}
		for _, o := range r.Trace.Ops {
			if o.Overlapped {
				return true
			}
		}
	}
	return false
}
