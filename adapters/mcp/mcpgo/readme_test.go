package mcpgo_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/mcpgo"
	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ledger moves money once per refund call unless the caller sends an
// idempotency key.
type ledger struct {
	mu      sync.Mutex
	refunds map[string]int
	keys    *idem.Store
}

func (b *ledger) refund(id string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refunds[id]++
	return "refunded " + id, nil
}

// newServer serves the ledger's refund tool over MCP.
func newServer(b **ledger) *server.MCPServer {
	tools := agentidemmcp.Tools{
		"refund": agentidemmcp.Write(agentidemmcp.Identity("payment_id")),
	}
	s := server.NewMCPServer("bank", "1.0.0", server.WithToolHandlerMiddleware(mcpgo.Middleware(tools)))
	s.AddTool(mcp.NewTool("refund", mcp.WithString("payment_id", mcp.Required()), mcp.WithString("key")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			id := req.GetString("payment_id", "")
			refund := func(context.Context) (string, error) { return (*b).refund(id) }
			var out string
			var err error
			if key := req.GetString("key", ""); key != "" {
				out, _, err = idem.Do(ctx, (*b).keys, key, id, refund)
			} else {
				out, err = refund(ctx)
			}
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(out), nil
		})
	return s
}

// refundAgent refunds two payments in parallel over MCP and retries a call
// that timed out, with an idempotency key derived from the work.
func refundAgent(c *client.Client) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, id := range []string{"pay-1", "pay-2"} {
			wg.Go(func() {
				req := mcp.CallToolRequest{}
				req.Params.Name = "refund"
				req.Params.Arguments = map[string]any{"payment_id": id, "key": idem.Key("refund", id)}
				for range 3 {
					_, errs[i] = c.CallTool(ctx, req)
					if errs[i] == nil || !strings.Contains(errs[i].Error(), "timeout") {
						return
					}
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
}

func TestRefundAgent(t *testing.T) {
	var b *ledger
	c, err := client.NewInProcessClient(newServer(&b))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	testkit.TestAgent(t, refundAgent(c), testkit.Setup(func(context.Context) error {
		b = &ledger{refunds: map[string]int{}, keys: idem.NewMemory()}
		return nil
	}))
}
