package todo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	agentidemeino "github.com/agentidem/agentidem-go/adapters/eino"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
)

// Declared is the agentidem view of the tools with update_todo declared
// idempotent; Undeclared is the same without the declaration.
var (
	Declared = agentidemeino.Tools{
		"add_todo":    agentidemeino.Write(agentidemeino.Identity("content")),
		"update_todo": agentidemeino.Write(agentidemeino.Identity("id"), agentidemeino.Idempotent()),
		"list_todo":   agentidemeino.Read(),
	}
	Undeclared = agentidemeino.Tools{
		"add_todo":    agentidemeino.Write(agentidemeino.Identity("content")),
		"update_todo": agentidemeino.Write(agentidemeino.Identity("id")),
		"list_todo":   agentidemeino.Read(),
	}
)

// Request is what the user asks the assistant in every run.
const Request = "Add 'buy milk' to my list, and mark 'write report' as done."

// Run is one invocation of the assistant: a ReAct agent over list, on a
// scripted chat model (no network), with tools described to agentidem by
// tools.
func Run(ctx context.Context, list *List, tools agentidemeino.Tools) error {
	add, err := utils.InferTool("add_todo", "add a to-do item", list.Add)
	if err != nil {
		return err
	}
	update, err := utils.InferTool("update_todo", "set fields of a to-do item", list.Update)
	if err != nil {
		return err
	}
	ls, err := utils.InferTool("list_todo", "list to-do items", list.Items)
	if err != nil {
		return err
	}
	a, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: scripted{},
		ToolsConfig: compose.ToolsNodeConfig{
			Tools:               []tool.BaseTool{add, update, ls},
			ToolCallMiddlewares: []compose.ToolMiddleware{agentidemeino.Middleware(tools)},
		},
	})
	if err != nil {
		return err
	}
	out, err := a.Generate(ctx, []*schema.Message{schema.UserMessage(Request)})
	if err != nil {
		return err
	}
	if !strings.Contains(out.Content, "buy milk") {
		return fmt.Errorf("unexpected answer %q", out.Content)
	}
	return nil
}

// scripted is a chat model that plays what a model does with Request: list
// the items, add the new one, then mark the one named done by the id the
// list gave.
type scripted struct{}

func call(id, name string, args any) schema.ToolCall {
	b, _ := json.Marshal(args)
	return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: string(b)}}
}

func (scripted) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	var results []string
	for _, msg := range in {
		if msg.Role == schema.Tool {
			results = append(results, msg.Content)
		}
	}
	switch len(results) {
	case 0:
		return schema.AssistantMessage("", []schema.ToolCall{call("call_1", "list_todo", ListIn{})}), nil
	case 1:
		return schema.AssistantMessage("", []schema.ToolCall{call("call_2", "add_todo", AddIn{Content: "buy milk"})}), nil
	case 2:
		var items []Item
		if err := json.Unmarshal([]byte(results[0]), &items); err != nil {
			return nil, fmt.Errorf("reading list_todo's answer: %w", err)
		}
		for _, it := range items {
			if it.Content == "write report" {
				done := true
				return schema.AssistantMessage("", []schema.ToolCall{call("call_3", "update_todo", UpdateIn{ID: it.ID, Done: &done})}), nil
			}
		}
		return nil, fmt.Errorf("no 'write report' in %s", results[0])
	}
	return schema.AssistantMessage("Added 'buy milk' and marked 'write report' done.", nil), nil
}

func (m scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m scripted) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }
