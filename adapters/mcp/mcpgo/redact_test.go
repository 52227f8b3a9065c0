package mcpgo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/mcpgo"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestRedactedNumberEchoedByTheTool is red team R1's case: a payment tool
// whose secret account number the model sends as a JSON number, and which
// echoes it in its answer. The account shows up nowhere in the report,
// whatever its size: one of 2^53 or more was printed whole
// ("charged account 12345678901234567891 ...") while named_args said
// "[redacted]".
func TestRedactedNumberEchoedByTheTool(t *testing.T) {
	for name, account := range map[string]string{"small": "4111111111111111", "2^53+1": "9007199254740993", "big": "12345678901234567891"} {
		t.Run(name, func(t *testing.T) {
			tools := agentidemmcp.Tools{"charge": agentidemmcp.Write(agentidemmcp.Identity("order_id"), agentidemmcp.Redact("account"))}
			s := server.NewMCPServer("pay", "1", server.WithToolHandlerMiddleware(mcpgo.Middleware(tools)))
			s.AddTool(mcp.NewTool("charge", mcp.WithString("order_id"), mcp.WithNumber("account")),
				func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					var in struct {
						Order   string      `json:"order_id"`
						Account json.Number `json:"account"`
					}
					raw, _ := json.Marshal(req.GetRawArguments())
					d := json.NewDecoder(strings.NewReader(string(raw)))
					d.UseNumber()
					if err := d.Decode(&in); err != nil {
						return mcp.NewToolResultError(err.Error()), nil
					}
					return mcp.NewToolResultText(fmt.Sprintf("charged account %s for %s", in.Account, in.Order)), nil
				})
			c, err := client.NewInProcessClient(s)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
			if _, err := c.Initialize(ctx, init); err != nil {
				t.Fatal(err)
			}
			agent := func(ctx context.Context) error {
				req := mcp.CallToolRequest{}
				req.Params.Name = "charge"
				req.Params.Arguments = json.RawMessage(`{"order_id":"ORD-1","account":` + account + `}`)
				_, err := c.CallTool(ctx, req)
				return err
			}
			rep := testkit.Run(t, agent, testkit.NoSummary())
			b, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			if i := strings.Index(string(b), account); i >= 0 {
				t.Errorf("secret %s leaked into the report: ...%s...", account, b[max(0, i-120):min(len(b), i+60)])
			}
			if !strings.Contains(string(b), "charged account [redacted] for ORD-1") {
				t.Errorf("the tool's answer lost its shape or was not recorded")
			}
		})
	}
}
