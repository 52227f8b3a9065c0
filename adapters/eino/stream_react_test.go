package agentidemeino_test

import (
	"context"
	"fmt"
	"io"
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

// desk is a ticket service: openTicket opens one ticket per request;
// keyed by order, a repeat is answered with the ticket it opened.
type desk struct {
	mu      sync.Mutex
	tickets []string
	byOrder map[string]bool
}

func (d *desk) open(ctx context.Context, order string, keyed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if keyed && d.byOrder[order] {
		runtime.MarkReplayed(ctx)
		return
	}
	d.tickets = append(d.tickets, order)
	d.byOrder[order] = true
}

func (d *desk) snapshot() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return map[string]any{"tickets": append([]string(nil), d.tickets...)}
}

type ticketIn struct {
	OrderID string `json:"order_id"`
}

// script is a scripted model: the first turn's tool calls, then the answer.
type script []schema.ToolCall

func (m script) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	if in[len(in)-1].Role == schema.Tool {
		return schema.AssistantMessage("done", nil), nil
	}
	return schema.AssistantMessage("", m), nil
}

func (m script) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m script) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// runReact runs a ReAct agent on the script, with Generate or with Stream
// (read to its end), and runs it again after an error, twice at most.
func runReact(ctx context.Context, m script, tools []tool.BaseTool, spec agentidemeino.Tools, stream bool) error {
	a, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: m,
		ToolsConfig: compose.ToolsNodeConfig{
			Tools:               tools,
			ToolCallMiddlewares: []compose.ToolMiddleware{agentidemeino.Middleware(spec)},
		},
	})
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		msgs := []*schema.Message{schema.UserMessage("Open a ticket for ORD-9.")}
		if stream {
			var sr *schema.StreamReader[*schema.Message]
			if sr, err = a.Stream(ctx, msgs); err == nil {
				for {
					if _, rerr := sr.Recv(); rerr != nil {
						if rerr != io.EOF {
							err = rerr
						}
						break
					}
				}
				sr.Close()
			}
		} else {
			_, err = a.Generate(ctx, msgs)
		}
		if err == nil || attempt >= 2 || ctx.Err() != nil {
			return err
		}
	}
}

// A streaming tool that does its work while it streams (rtS #1): it
// returns its reader at once, and a goroutine sends a progress chunk, opens
// the ticket, then sends the ticket. The agent runs the turn again after
// an error. Unkeyed, a lost answer after the ticket was opened opens a
// second one: lost_acknowledgement must show it, where the fault injected
// when the stream opened closed the stream before the ticket and the
// retry's one ticket was judged an absorbed repeat (SAFE). Keyed by order,
// the same agent passes.
func TestStreamingToolWhoseWorkHappensWhileItStreams(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		t.Run(fmt.Sprintf("keyed=%v", keyed), func(t *testing.T) {
			var d *desk
			agent := func(ctx context.Context) error {
				open, err := streamingTicketTool(&d, keyed)
				if err != nil {
					return err
				}
				m := script{toolCall("call_1", "open_ticket", `{"order_id":"ORD-9"}`)}
				return runReact(ctx, m, []tool.BaseTool{open},
					agentidemeino.Tools{"open_ticket": agentidemeino.Write(agentidemeino.Identity("order_id"))}, false)
			}
			rep := checked(t, testkit.Run(t, agent,
				testkit.Setup(func(context.Context) error { d = &desk{byOrder: map[string]bool{}}; return nil }),
				testkit.State(func() any { return d.snapshot() })))
			if keyed {
				if !rep.Safe || rep.InconclusiveCount != 0 {
					t.Errorf("keyed: safe %v, %d inconclusive: %v", rep.Safe, rep.InconclusiveCount, codes(rep))
				}
				return
			}
			for _, sc := range []string{runtime.ScenarioLostAck + "/open_ticket#1", runtime.ScenarioCrashRestart + "/open_ticket#1"} {
				if !hasCode(rep, runtime.CodeDuplicateWrite, sc) {
					t.Errorf("unkeyed: no duplicate_write in %s: %v", sc, codes(rep))
				}
			}
		})
	}
}

// A correct agent run with Stream whose one turn makes two keyed calls
// (rtS #5): Eino runs the first in the graph's own goroutine, which the
// crash ends at its call after the crash; the graph runner's deferred
// end-of-graph callback then panics (it asserts a stream the graph never
// made). A real crash runs no deferred code: the suite notes the panic and
// the agent passes, where agent_panic was reported.
func TestStreamAgentCrashGoexitPanicIsNotTheAgents(t *testing.T) {
	w := newWorld()
	agent := func(ctx context.Context) error {
		b := w.b.Load()
		create, err := utils.InferTool("createInvoice", "create an invoice", b.create)
		if err != nil {
			return err
		}
		m := script{
			toolCall("call_1", "createInvoice", `{"invoice_id":"INV-1","customer":"acme"}`),
			toolCall("call_2", "createInvoice", `{"invoice_id":"INV-2","customer":"globex"}`),
		}
		return runReact(ctx, m, []tool.BaseTool{create}, tools, true)
	}
	rep := checked(t, testkit.Run(t, agent,
		testkit.Setup(func(context.Context) error { w.b.Store(newBilling()); return nil })))
	if hasCode(rep, runtime.CodeAgentPanic, "") || !rep.Safe {
		t.Errorf("correct agent run with Stream: safe %v, findings %v", rep.Safe, codes(rep))
	}
	noted := false
	for _, res := range rep.Results {
		if strings.HasPrefix(res.Scenario, runtime.ScenarioCrashRestart+"/") &&
			strings.Contains(strings.Join(res.Trace.Notes, "\n"), "panicked while it unwound") {
			noted = true
		}
	}
	if !noted {
		t.Errorf("no crash scenario notes the panic the crash's Goexit caused in Eino's graph runner")
	}
}

// A keyed streaming tool beside an invokable one in one turn, run with
// Stream: the crash fires at the streaming call's end, while Eino's
// worker for the other call has not made it yet. Ended with Goexit, the
// worker left Eino a task with neither a stream nor an error, whose nil
// stream Eino then read in a goroutine of its own, and the test binary
// died; refused (runtime.FrameworkCall), the call's error ends the turn,
// and the correct agent passes.
func TestStreamingCallCrashBesideAnotherCall(t *testing.T) {
	var d *desk
	w := newWorld()
	agent := func(ctx context.Context) error {
		open, err := streamingTicketTool(&d, true)
		if err != nil {
			return err
		}
		create, err := utils.InferTool("createInvoice", "create an invoice", w.b.Load().create)
		if err != nil {
			return err
		}
		m := script{
			toolCall("call_1", "open_ticket", `{"order_id":"ORD-9"}`),
			toolCall("call_2", "createInvoice", `{"invoice_id":"INV-1","customer":"acme"}`),
		}
		spec := agentidemeino.Tools{
			"open_ticket":   agentidemeino.Write(agentidemeino.Identity("order_id")),
			"createInvoice": tools["createInvoice"],
		}
		return runReact(ctx, m, []tool.BaseTool{open, create}, spec, true)
	}
	rep := checked(t, testkit.Run(t, agent,
		testkit.Setup(func(context.Context) error {
			d = &desk{byOrder: map[string]bool{}}
			w.b.Store(newBilling())
			return nil
		}),
		testkit.State(func() any { return d.snapshot() })))
	if !rep.Safe || rep.InconclusiveCount != 0 {
		t.Errorf("correct agent: safe %v, %d inconclusive: %v", rep.Safe, rep.InconclusiveCount, codes(rep))
	}
}

// streamingTicketTool is a streaming tool that sends a progress chunk,
// opens the ticket on *d (keyed by order or not) while it streams, then
// sends the ticket: its work happens after the stream opened.
func streamingTicketTool(d **desk, keyed bool) (tool.StreamableTool, error) {
	return utils.InferStreamTool("open_ticket", "open a ticket, streaming progress",
		func(ctx context.Context, in ticketIn) (*schema.StreamReader[string], error) {
			sr, sw := schema.Pipe[string](4)
			go func() {
				defer sw.Close()
				if sw.Send("checking order "+in.OrderID+"\n", nil) {
					return
				}
				(*d).open(ctx, in.OrderID, keyed)
				sw.Send("opened a ticket for "+in.OrderID+"\n", nil)
			}()
			return sr, nil
		})
}
