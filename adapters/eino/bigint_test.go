package agentidemeino_test

import (
	"context"
	"fmt"
	"strings"
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

type orderIn struct {
	OrderID int64 `json:"order_id"`
}

// twoOrders refunds, in one turn, two different orders whose 64-bit ids
// differ beyond float64 precision.
type twoOrders struct{}

func (twoOrders) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	if in[len(in)-1].Role == schema.Tool {
		return schema.AssistantMessage("done", nil), nil
	}
	return schema.AssistantMessage("", []schema.ToolCall{
		{ID: "1", Type: "function", Function: schema.FunctionCall{Name: "refund", Arguments: `{"order_id":1234567890123456788}`}},
		{ID: "2", Type: "function", Function: schema.FunctionCall{Name: "refund", Arguments: `{"order_id":1234567890123456789}`}},
	}), nil
}

func (m twoOrders) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	return schema.StreamReaderFromArray([]*schema.Message{msg}), err
}

func (m twoOrders) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

func TestBigIntegerIDsAreDistinctIdentities(t *testing.T) {
	var mu sync.Mutex
	var refunds map[int64]int
	refund := func(ctx context.Context, in orderIn) (string, error) {
		mu.Lock()
		refunds[in.OrderID]++
		mu.Unlock()
		return fmt.Sprint("refunded ", in.OrderID), nil
	}
	agent := func(ctx context.Context) error {
		rt, err := utils.InferTool("refund", "refund an order", refund)
		if err != nil {
			return err
		}
		tools := agentidemeino.Tools{"refund": agentidemeino.Write(agentidemeino.Identity("order_id"))}
		a, err := react.NewAgent(ctx, &react.AgentConfig{
			ToolCallingModel: twoOrders{},
			ToolsConfig: compose.ToolsNodeConfig{
				Tools:               []tool.BaseTool{rt},
				ToolCallMiddlewares: []compose.ToolMiddleware{agentidemeino.Middleware(tools)},
			},
		})
		if err != nil {
			return err
		}
		_, err = a.Generate(ctx, []*schema.Message{schema.UserMessage("refund both")})
		return err
	}
	rep := testkit.Run(t, agent, testkit.Setup(func(context.Context) error {
		mu.Lock()
		refunds = map[int64]int{}
		mu.Unlock()
		return nil
	}), testkit.Invariant("no order refunded twice", func(*runtime.Trace) error {
		mu.Lock()
		defer mu.Unlock()
		for id, n := range refunds {
			if n > 1 {
				return fmt.Errorf("order %d refunded %d times", id, n)
			}
		}
		return nil
	}))
	if !rep.Baseline.Safe {
		t.Errorf("baseline: two refunds of two different orders judged unsafe: %v", rep.Baseline.Findings)
	}
	for _, r := range rep.Results {
		if strings.HasPrefix(r.Scenario, "interleaving/") && !r.Safe {
			t.Errorf("%s: unsafe: %v", r.Scenario, r.Findings)
		}
	}
}
