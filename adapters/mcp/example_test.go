package agentidemmcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/runtime"
)

// Call wraps one tool call of any MCP server the way the SDK middlewares
// do: here a refund handler, traced once.
func ExampleCall() {
	reg := agentidemmcp.New(agentidemmcp.Tools{
		"refund": agentidemmcp.Write(agentidemmcp.Identity("payment_id"), agentidemmcp.Redact("card")),
	})
	handler := func(ctx context.Context) (string, error) { return "refunded", nil }

	tr, _ := runtime.RunTraced(context.Background(), "example", func(ctx context.Context) error {
		_, err := agentidemmcp.Call(ctx, reg, "refund", json.RawMessage(`{"payment_id":"pay-1","card":"4242"}`), handler,
			func(s string) (any, error) { return s, nil })
		return err
	})
	o := tr.Ops[0]
	args, _ := json.Marshal(o.Args)
	fmt.Println(o.ID, o.Kind, o.Identity, o.Status, o.Result)
	fmt.Println(string(args))
	// Output:
	// 1:refund#1 write "pay-1" success refunded
	// {"arguments":{"card":"[redacted]","payment_id":"pay-1"}}
}
