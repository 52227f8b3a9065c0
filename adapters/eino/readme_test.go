package agentidemeino_test

import (
	"context"
	"sync"
	"testing"

	agentidemeino "github.com/agentidem/agentidem-go/adapters/eino"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
)

// invoices creates invoices by the id the caller chooses: a repeat is a
// replay, and says so to the trace.
type invoices struct {
	mu  sync.Mutex
	ids map[string]bool
}

type invoiceIn struct {
	ID string `json:"invoice_id"`
}

func (s *invoices) create(ctx context.Context, in invoiceIn) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids[in.ID] {
		runtime.MarkReplayed(ctx)
	}
	s.ids[in.ID] = true
	return "created " + in.ID, nil
}

// scriptedModel plays a script instead of calling an LLM: one tool call, then the
// answer.
type scriptedModel struct{}

func (scriptedModel) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	if in[len(in)-1].Role == schema.Tool {
		return schema.AssistantMessage("Invoice INV-1 is created.", nil), nil
	}
	return schema.AssistantMessage("", []schema.ToolCall{{ID: "1", Type: "function",
		Function: schema.FunctionCall{Name: "createInvoice", Arguments: `{"invoice_id":"INV-1"}`}}}), nil
}

func (m scriptedModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	return schema.StreamReaderFromArray([]*schema.Message{msg}), err
}

func (m scriptedModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}

func TestInvoiceAgent(t *testing.T) {
	var store *invoices
	agent := func(ctx context.Context) error {
		create, err := utils.InferTool("createInvoice", "create an invoice", store.create)
		if err != nil {
			return err
		}
		tools := agentidemeino.Tools{
			"createInvoice": agentidemeino.Write(agentidemeino.Identity("invoice_id")),
		}
		a, err := react.NewAgent(ctx, &react.AgentConfig{
			ToolCallingModel: scriptedModel{},
			ToolsConfig: compose.ToolsNodeConfig{
				Tools:               []tool.BaseTool{create},
				ToolCallMiddlewares: []compose.ToolMiddleware{agentidemeino.Middleware(tools)},
			},
		})
		if err != nil {
			return err
		}
		_, err = a.Generate(ctx, []*schema.Message{schema.UserMessage("Invoice order ORD-9.")})
		return err
	}
	testkit.TestAgent(t, agent, testkit.Setup(func(context.Context) error {
		store = &invoices{ids: map[string]bool{}}
		return nil
	}))
}
