package agentidemeino_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	agentidemeino "github.com/agentidem/agentidem-go/adapters/eino"
	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
)

// billing is the world: invoices, and orders attached to them. Attaching
// to an invoice that does not exist yet is accepted, as many APIs do, and
// leaves a dangling attachment.
type billing struct {
	mu       sync.Mutex
	invoices map[string]string
	attached map[string]string // order -> invoice
	dangling []string
}

func newBilling() *billing {
	return &billing{invoices: map[string]string{}, attached: map[string]string{}}
}

type createIn struct {
	InvoiceID string `json:"invoice_id" jsonschema:"description=id of the new invoice"`
	Customer  string `json:"customer" jsonschema:"description=customer billed"`
}

type attachIn struct {
	InvoiceID string `json:"invoice_id" jsonschema:"description=invoice to attach to"`
	OrderID   string `json:"order_id" jsonschema:"description=order to attach"`
}

type ack struct {
	OK        bool   `json:"ok"`
	InvoiceID string `json:"invoice_id"`
}

// create is idempotent by the invoice id the caller chooses: a repeat is
// answered as done, and says so to the trace.
func (b *billing) create(ctx context.Context, in createIn) (ack, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.invoices[in.InvoiceID]; ok {
		if c != in.Customer {
			return ack{}, fmt.Errorf("invoice %s exists for another customer", in.InvoiceID)
		}
		runtime.MarkReplayed(ctx)
		return ack{OK: true, InvoiceID: in.InvoiceID}, nil
	}
	b.invoices[in.InvoiceID] = in.Customer
	return ack{OK: true, InvoiceID: in.InvoiceID}, nil
}

// attach is idempotent too: attaching an order where it already is does
// nothing.
func (b *billing) attach(ctx context.Context, in attachIn) (ack, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.attached[in.OrderID] == in.InvoiceID {
		runtime.MarkReplayed(ctx)
		return ack{OK: true, InvoiceID: in.InvoiceID}, nil
	}
	if _, ok := b.invoices[in.InvoiceID]; !ok {
		b.dangling = append(b.dangling, in.OrderID+"->"+in.InvoiceID)
	}
	b.attached[in.OrderID] = in.InvoiceID
	return ack{OK: true, InvoiceID: in.InvoiceID}, nil
}

func (b *billing) check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.dangling) > 0 {
		return fmt.Errorf("attached before the invoice existed: %s", strings.Join(b.dangling, ", "))
	}
	return nil
}

// tools is the agentidem view of the billing tools.
var tools = agentidemeino.Tools{
	"createInvoice": agentidemeino.Write(agentidemeino.Identity("invoice_id")),
	"attachInvoice": agentidemeino.Write(agentidemeino.Identity("invoice_id", "order_id"),
		agentidemeino.Entity("invoice_id"), agentidemeino.After("createInvoice")),
}

// scripted is a chat model without a network: it plays a fixed script,
// choosing its turn from the tool results already in the conversation.
// oneTurn emits createInvoice and attachInvoice in one assistant message
// (the seeded bug: Eino runs them in parallel); otherwise it waits for the
// invoice before attaching.
type scripted struct{ oneTurn bool }

func toolCall(id, name, args string) schema.ToolCall {
	return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}
}

var (
	createCall = toolCall("call_1", "createInvoice", `{"invoice_id":"INV-1","customer":"acme"}`)
	attachCall = toolCall("call_2", "attachInvoice", `{"invoice_id":"INV-1","order_id":"ORD-9"}`)
)

func (m scripted) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	results := 0
	for _, msg := range in {
		if msg.Role == schema.Tool {
			results++
		}
	}
	switch {
	case results == 0 && m.oneTurn:
		return schema.AssistantMessage("", []schema.ToolCall{createCall, attachCall}), nil
	case results == 0:
		return schema.AssistantMessage("", []schema.ToolCall{createCall}), nil
	case results == 1 && !m.oneTurn:
		return schema.AssistantMessage("", []schema.ToolCall{attachCall}), nil
	}
	return schema.AssistantMessage("Invoice INV-1 is filed and order ORD-9 is attached.", nil), nil
}

func (m scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m scripted) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// world holds the billing of the current scenario.
type world struct{ b atomic.Pointer[billing] }

func newWorld() *world {
	w := &world{}
	w.b.Store(newBilling())
	return w
}

// agent is one invocation: a ReAct agent on the scripted model whose tools
// go through Eino's ToolsNode with the agentidem middleware. sequential
// sets the node's ExecuteSequentially.
func (w *world) agent(oneTurn, sequential bool) func(context.Context) error {
	return func(ctx context.Context) error {
		a, err := w.react(ctx, oneTurn, sequential)
		if err != nil {
			return err
		}
		out, err := a.Generate(ctx, []*schema.Message{schema.UserMessage("File the invoice for order ORD-9.")})
		if err != nil {
			return err
		}
		if !strings.Contains(out.Content, "INV-1") {
			return fmt.Errorf("unexpected answer %q", out.Content)
		}
		return nil
	}
}

// react builds the agent's ReAct agent on the current billing.
func (w *world) react(ctx context.Context, oneTurn, sequential bool) (*react.Agent, error) {
	b := w.b.Load()
	create, err := utils.InferTool("createInvoice", "create an invoice", b.create)
	if err != nil {
		return nil, err
	}
	attach, err := utils.InferTool("attachInvoice", "attach an order to an invoice", b.attach)
	if err != nil {
		return nil, err
	}
	return react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: scripted{oneTurn: oneTurn},
		ToolsConfig: compose.ToolsNodeConfig{
			Tools:               []tool.BaseTool{create, attach},
			ExecuteSequentially: sequential,
			ToolCallMiddlewares: []compose.ToolMiddleware{agentidemeino.Middleware(tools)},
		},
	})
}

func (w *world) options() []testkit.Option {
	return []testkit.Option{
		testkit.Setup(func(context.Context) error { w.b.Store(newBilling()); return nil }),
		testkit.Invariant("no attachment before its invoice", func(*runtime.Trace) error { return w.b.Load().check() }),
	}
}

func TestTraceThroughToolsNode(t *testing.T) {
	w := newWorld()
	tr, err := runtime.RunTraced(context.Background(), "billing-agent", w.agent(false, false))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Ops) != 2 {
		t.Fatalf("traced %d calls, want 2", len(tr.Ops))
	}
	c, a := tr.Ops[0], tr.Ops[1]
	if c.Name != "createInvoice" || c.Identity != `"INV-1"` || c.Status != runtime.StatusSuccess {
		t.Errorf("create: %s %s %s", c.Name, c.Identity, c.Status)
	}
	if a.Name != "attachInvoice" || a.Identity != `["INV-1","ORD-9"]` || a.Entity != `"INV-1"` {
		t.Errorf("attach: %s %s %s", a.Name, a.Identity, a.Entity)
	}
	res, _ := json.Marshal(c.Result)
	if string(res) != `{"ok":true,"invoice_id":"INV-1"}` {
		t.Errorf("recorded result %s", res)
	}
}

func TestOneTurnDependentPairIsCaught(t *testing.T) {
	w := newWorld()
	rep := checked(t, testkit.Run(t, w.agent(true, false), w.options()...))
	f := first(t, rep, runtime.CodeDependentCallsConcurrent)
	if strings.Join(f.Ops, ",") != "createInvoice,attachInvoice" {
		t.Errorf("finding ops %v", f.Ops)
	}
	if !strings.HasPrefix(f.Scenario, runtime.ScenarioInterleaving+"/") {
		t.Errorf("found in %s, want an interleaving scenario", f.Scenario)
	}
	if !strings.Contains(f.Replay, "AGENTIDEM_SCHEDULE=") {
		t.Errorf("replay line %q names no schedule", f.Replay)
	}
	// Some schedule of Eino's own dispatch ran attach first: the world
	// shows it.
	if !hasCode(rep, runtime.CodeInvariantFailed, runtime.ScenarioInterleaving+"/") {
		t.Errorf("no schedule ran attachInvoice before createInvoice; findings: %v", codes(rep))
	}
	if rep.Safe {
		t.Error("report says safe")
	}
}

// A schedule printed by a finding replays exactly, through Eino's own
// dispatch: the one that ran attachInvoice first fails the invariant again.
func TestScheduleReplays(t *testing.T) {
	w := newWorld()
	rep := checked(t, testkit.Run(t, w.agent(true, false), w.options()...))
	var sched string
	for _, f := range rep.Findings {
		if f.Code == runtime.CodeInvariantFailed && strings.HasPrefix(f.Scenario, runtime.ScenarioInterleaving+"/") {
			sched = strings.TrimPrefix(f.Scenario, runtime.ScenarioInterleaving+"/")
			break
		}
	}
	if sched == "" {
		t.Fatalf("no schedule broke the invariant: %v", codes(rep))
	}
	for range 3 {
		again := testkit.Run(t, w.agent(true, false), append(w.options(), testkit.Replay(sched))...)
		if !hasCode(again, runtime.CodeInvariantFailed, runtime.ScenarioInterleaving+"/"+sched) {
			t.Fatalf("replaying %s did not break the invariant again: %v", sched, codes(again))
		}
	}
}

func TestTwoTurnsPass(t *testing.T) {
	w := newWorld()
	rep := checked(t, testkit.TestAgent(t, w.agent(false, false), w.options()...))
	if !rep.Safe {
		t.Fatalf("two-turn agent unsafe: %v", codes(rep))
	}
	if rep.InconclusiveCount != 0 {
		t.Errorf("%d inconclusive scenarios: a fault did not fire through the middleware", rep.InconclusiveCount)
	}
	if n := len(rep.Results); n < 8 {
		t.Errorf("%d scenarios ran, want the faults of both writes", n)
	}
}

// The same one-turn script through a ToolsNode that runs calls one after
// the other: nothing is concurrent, so there is no schedule to explore and
// no dependent_calls_concurrent. What the harness finds above is Eino's
// parallel dispatch, not the script. (One turn is still wrong: Eino runs
// attachInvoice even when createInvoice failed, which the fault suite
// shows.)
func TestSequentialToolsNodeIsNotFlagged(t *testing.T) {
	w := newWorld()
	rep := checked(t, testkit.Run(t, w.agent(true, true), w.options()...))
	if hasCode(rep, runtime.CodeDependentCallsConcurrent, "") {
		t.Errorf("sequential dispatch flagged as concurrent: %v", codes(rep))
	}
	for _, r := range rep.Results {
		if strings.HasPrefix(r.Scenario, runtime.ScenarioInterleaving+"/") {
			t.Errorf("schedule %s explored for calls that never overlap", r.Scenario)
		}
	}
	if !hasCode(rep, runtime.CodeInvariantFailed, "before_operation_failure/createInvoice#1") {
		t.Errorf("attach after a failed create not caught: %v", codes(rep))
	}
}

func TestFaultReachesTheAgent(t *testing.T) {
	w := newWorld()
	rep := checked(t, testkit.Run(t, w.agent(false, false), append(w.options(), testkit.With(runtime.OnlyScenario("lost_acknowledgement/createInvoice#1")))...))
	var res *runtime.Result
	for _, r := range rep.Results {
		if r.Scenario == "lost_acknowledgement/createInvoice#1" {
			res = r
		}
	}
	if res == nil {
		t.Fatal("scenario did not run")
	}
	if !res.FaultFired || !res.Failed || !strings.Contains(res.Error, "injected lost acknowledgement") {
		t.Errorf("fired %v failed %v error %q: the injected timeout must reach the agent as the tool's error", res.FaultFired, res.Failed, res.Error)
	}
	if calls := res.Trace.Calls("attachInvoice"); len(calls) != 0 {
		t.Errorf("the agent went on after the lost acknowledgement: %d attach calls", len(calls))
	}
}

func TestPassThroughWhenInactive(t *testing.T) {
	w := newWorld()
	if err := w.agent(true, false)(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := w.b.Load()
	if len(b.invoices) != 1 || len(b.attached) != 1 {
		t.Errorf("invoices %v attached %v", b.invoices, b.attached)
	}
}

func first(t *testing.T, rep *runtime.Report, code string) runtime.Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Code == code {
			return f
		}
	}
	t.Fatalf("no %s finding; findings: %v", code, codes(rep))
	return runtime.Finding{}
}

func hasCode(rep *runtime.Report, code, scenarioPrefix string) bool {
	for _, f := range rep.Findings {
		if f.Code == code && strings.HasPrefix(f.Scenario, scenarioPrefix) {
			return true
		}
	}
	return false
}

func codes(rep *runtime.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Scenario+":"+f.Code)
	}
	sort.Strings(out)
	return out
}

// checked validates a report against runtime/report.schema.json before the
// test looks at it.
func checked(t *testing.T, rep *runtime.Report) *runtime.Report {
	t.Helper()
	if err := reportschema.Validate(rep); err != nil {
		t.Fatalf("report does not match the schema: %v", err)
	}
	return rep
}
