package agentidemeino_test

import (
	"context"
	"fmt"
	"sort"

	agentidemeino "github.com/agentidem/agentidem-go/adapters/eino"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
)

// Middleware on a bare ToolsNode: one assistant message with two tool
// calls, which Eino runs in parallel, both traced.
func ExampleMiddleware() {
	type in struct {
		ID string `json:"invoice_id"`
	}
	done := func(_ context.Context, x in) (string, error) { return "ok " + x.ID, nil }
	create, _ := utils.InferTool("createInvoice", "create an invoice", done)
	send, _ := utils.InferTool("sendInvoice", "send an invoice", done)

	ctx := context.Background()
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{
		Tools: []tool.BaseTool{create, send},
		ToolCallMiddlewares: []compose.ToolMiddleware{agentidemeino.Middleware(agentidemeino.Tools{
			"createInvoice": agentidemeino.Write(agentidemeino.Identity("invoice_id")),
			"sendInvoice":   agentidemeino.Write(agentidemeino.Identity("invoice_id"), agentidemeino.After("createInvoice")),
		})},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	turn := schema.AssistantMessage("", []schema.ToolCall{
		{ID: "1", Type: "function", Function: schema.FunctionCall{Name: "createInvoice", Arguments: `{"invoice_id":"INV-1"}`}},
		{ID: "2", Type: "function", Function: schema.FunctionCall{Name: "sendInvoice", Arguments: `{"invoice_id":"INV-1"}`}},
	})
	tr, _ := runtime.RunTraced(ctx, "example", func(ctx context.Context) error {
		_, err := node.Invoke(ctx, turn)
		return err
	})
	var lines []string
	for _, o := range tr.Ops {
		lines = append(lines, fmt.Sprintf("%s %s %s", o.Name, o.Identity, o.Status))
	}
	sort.Strings(lines) // parallel calls start in any order
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// createInvoice "INV-1" success
	// sendInvoice "INV-1" success
}
