package agentidemeino_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	agentidemeino "github.com/agentidem/agentidem-go/adapters/eino"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
)

// create_customer takes a customer object, and Identity("customer.email")
// names the email inside it: two customers in one turn, through Eino's
// real ToolsNode. The path finds each call's email (no identity_missing),
// and the tool, which appends a row per call, is caught creating a
// customer twice when the invocation is delivered twice.
func TestDottedIdentityPath(t *testing.T) {
	type custIn struct {
		Customer struct {
			Email string `json:"email"`
			Name  string `json:"name"`
		} `json:"customer"`
	}
	var mu sync.Mutex
	var rows []string
	agent := func(ctx context.Context) error {
		create, err := utils.InferTool("create_customer", "create a customer", func(ctx context.Context, in custIn) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			rows = append(rows, in.Customer.Email)
			return "ok", nil
		})
		if err != nil {
			return err
		}
		tn, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: []tool.BaseTool{create},
			ToolCallMiddlewares: []compose.ToolMiddleware{agentidemeino.Middleware(agentidemeino.Tools{
				"create_customer": agentidemeino.Write(agentidemeino.Identity("customer.email")),
			})}})
		if err != nil {
			return err
		}
		_, err = tn.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{
			{ID: "1", Type: "function", Function: schema.FunctionCall{Name: "create_customer", Arguments: `{"customer":{"email":"a@x.io","name":"Ann"}}`}},
			{ID: "2", Type: "function", Function: schema.FunctionCall{Name: "create_customer", Arguments: `{"customer":{"email":"b@x.io","name":"Bob"}}`}},
		}))
		return err
	}
	rep := testkit.Run(t, agent, testkit.NoSummary(),
		testkit.Setup(func(context.Context) error { mu.Lock(); rows = nil; mu.Unlock(); return nil }))
	if len(rep.Baseline.Findings) != 0 || !rep.BaselineSucceeded {
		t.Fatalf("baseline: succeeded %v, findings %v; want a clean baseline", rep.BaselineSucceeded, rep.Baseline.Findings)
	}
	var ids []string
	for _, o := range rep.Baseline.Trace.Ops {
		ids = append(ids, o.Identity)
	}
	slices.Sort(ids)
	if len(ids) != 2 || ids[0] == "" || ids[0] == ids[1] {
		t.Fatalf("baseline identities %q, want the two emails", ids)
	}
	dup := false
	for _, f := range rep.Findings {
		if f.Code == runtime.CodeDuplicateWrite && f.Scenario == "duplicate_delivery/sequential" {
			dup = true
		}
	}
	if !dup || rep.Safe {
		t.Errorf("safe %v, duplicate_write in duplicate_delivery/sequential %v: want the customer created twice caught", rep.Safe, dup)
	}
}
