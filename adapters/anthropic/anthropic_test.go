package agentidemanthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	agentidemanthropic "github.com/agentidem/agentidem-go/adapters/anthropic"
	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/toolrunner"
)

// billing is the world: invoices, and orders attached to them. Attaching
// to an invoice that does not exist yet is accepted, as many APIs do, and
// leaves a dangling attachment.
type billing struct {
	mu       sync.Mutex
	invoices map[string]string
	attached map[string]string // order -> invoice
	dangling []string
	naive    bool // create issues another invoice for a repeat
}

func newBilling(naive bool) *billing {
	return &billing{invoices: map[string]string{}, attached: map[string]string{}, naive: naive}
}

type createIn struct {
	InvoiceID string `json:"invoice_id" jsonschema:"required,description=id of the new invoice"`
	Customer  string `json:"customer" jsonschema:"required,description=customer billed"`
}

type attachIn struct {
	InvoiceID string `json:"invoice_id" jsonschema:"required,description=invoice to attach to"`
	OrderID   string `json:"order_id" jsonschema:"required,description=order to attach"`
}

func text(s string) anthropic.BetaToolResultBlockParamContentUnion {
	return anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: s}}
}

// create is idempotent by the invoice id the caller chooses: a repeat is
// answered as done, and says so to the trace.
func (b *billing) create(ctx context.Context, in createIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.invoices[in.InvoiceID]; ok && !b.naive {
		if c != in.Customer {
			return text(""), fmt.Errorf("invoice %s exists for another customer", in.InvoiceID)
		}
		runtime.MarkReplayed(ctx)
		return text(`{"ok":true,"invoice_id":"` + in.InvoiceID + `"}`), nil
	}
	b.invoices[in.InvoiceID] = in.Customer
	return text(`{"ok":true,"invoice_id":"` + in.InvoiceID + `"}`), nil
}

// attach is idempotent too: attaching an order where it already is does
// nothing.
func (b *billing) attach(ctx context.Context, in attachIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.attached[in.OrderID] == in.InvoiceID {
		runtime.MarkReplayed(ctx)
		return text("attached"), nil
	}
	if _, ok := b.invoices[in.InvoiceID]; !ok {
		b.dangling = append(b.dangling, in.OrderID+"->"+in.InvoiceID)
	}
	b.attached[in.OrderID] = in.InvoiceID
	return text("attached"), nil
}

func (b *billing) check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.dangling) > 0 {
		return fmt.Errorf("attached before the invoice existed: %s", strings.Join(b.dangling, ", "))
	}
	return nil
}

// specs is the agentidem view of the billing tools.
var specs = agentidemanthropic.Tools{
	"createInvoice": agentidemanthropic.Write(agentidemanthropic.Identity("invoice_id")),
	"attachInvoice": agentidemanthropic.Write(agentidemanthropic.Identity("invoice_id", "order_id"),
		agentidemanthropic.Entity("invoice_id"), agentidemanthropic.After("createInvoice")),
}

var (
	createCall = apiBlock{Name: "createInvoice", Input: json.RawMessage(`{"invoice_id":"INV-1","customer":"acme"}`)}
	attachCall = apiBlock{Name: "attachInvoice", Input: json.RawMessage(`{"invoice_id":"INV-1","order_id":"ORD-9"}`)}
)

// invoiceFiled is nil when the runner's last message says the invoice is
// filed, as the scripted model ends a run that went through.
func invoiceFiled(msg *anthropic.BetaMessage, err error) error {
	if err != nil {
		return err
	}
	for _, c := range msg.Content {
		if c.Type == "text" && strings.Contains(c.Text, "is filed") {
			return nil
		}
	}
	return fmt.Errorf("unexpected answer %+v", msg.Content)
}

// readConversation reads what a scripted model needs of the conversation so
// far: the tool calls of the last turn that came back as errors, the tools
// answered without error, and how many assistant turns there were.
func readConversation(conv []apiMessage) (failed []apiBlock, done map[string]bool, turns int) {
	asked := map[string]apiBlock{} // tool_use id -> call
	done = map[string]bool{}       // tool name -> answered without error
	for _, m := range conv {
		failed = failed[:0] // the calls of the last turn that failed
		for _, b := range m.blocks() {
			switch b.Type {
			case "tool_use":
				asked[b.ID] = apiBlock{Name: b.Name, Input: b.Input}
			case "tool_result":
				if c := asked[b.ToolUseID]; b.IsError {
					failed = append(failed, c)
				} else {
					done[c.Name] = true
				}
			}
		}
		if m.Role == "assistant" {
			turns++
		}
	}
	return failed, done, turns
}

// billingScript is the model. A tool call that came back as an error is
// asked for again (the model retries); otherwise oneTurn asks for
// createInvoice and attachInvoice in one assistant turn (the seeded bug: the
// runner executes them concurrently), and the sequential script waits for
// the invoice before attaching.
func billingScript(oneTurn bool) func([]apiMessage) ([]apiBlock, string) {
	return func(conv []apiMessage) ([]apiBlock, string) {
		failed, done, turns := readConversation(conv)
		switch {
		case turns >= 6:
			return nil, "Giving up on invoice INV-1."
		case len(failed) > 0:
			return failed, ""
		case turns == 0 && oneTurn:
			return []apiBlock{createCall, attachCall}, ""
		case !done["createInvoice"]:
			return []apiBlock{createCall}, ""
		case !done["attachInvoice"] && !oneTurn:
			return []apiBlock{attachCall}, ""
		}
		return nil, "Invoice INV-1 is filed and order ORD-9 is attached."
	}
}

// retryScript is a model that asks for createInvoice, and, after a call
// failed, for again in its place (the model retyping the call), then
// answers final; it gives up after four turns.
func retryScript(again apiBlock, final string) func([]apiMessage) ([]apiBlock, string) {
	return func(conv []apiMessage) ([]apiBlock, string) {
		failed, done, turns := readConversation(conv)
		switch {
		case turns >= 4:
			return nil, "Giving up."
		case len(failed) > 0:
			return []apiBlock{again}, ""
		case !done["createInvoice"]:
			return []apiBlock{createCall}, ""
		}
		return nil, final
	}
}

// world holds the billing of the current scenario.
type world struct {
	b     atomic.Pointer[billing]
	naive bool
}

func newWorld() *world {
	w := &world{}
	w.b.Store(newBilling(false))
	return w
}

// agent is one invocation: the SDK's tool runner on the scripted model,
// with the billing tools wrapped by the adapter.
func (w *world) agent(oneTurn bool) func(context.Context) error {
	return func(ctx context.Context) error {
		b := w.b.Load()
		create, err := toolrunner.NewBetaToolFromJSONSchema("createInvoice", "create an invoice", b.create)
		if err != nil {
			return err
		}
		attach, err := toolrunner.NewBetaToolFromJSONSchema("attachInvoice", "attach an order to an invoice", b.attach)
		if err != nil {
			return err
		}
		client := anthropic.NewClient(
			option.WithAPIKey("test-key"),
			option.WithBaseURL("http://model.test/"),
			option.WithMaxRetries(0),
			option.WithHTTPClient(&http.Client{Transport: inProcess{&messagesAPI{script: billingScript(oneTurn)}}}),
		)
		runner := client.Beta.Messages.NewToolRunner(
			agentidemanthropic.Wrap(specs, []anthropic.BetaTool{create, attach}),
			anthropic.BetaToolRunnerParams{
				BetaMessageNewParams: anthropic.BetaMessageNewParams{
					Model:     "claude-scripted",
					MaxTokens: 1024,
					Messages: []anthropic.BetaMessageParam{
						anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("File the invoice for order ORD-9.")),
					},
				},
				MaxIterations: 10,
				DisableThread: true,
			})
		return invoiceFiled(runner.RunToCompletion(ctx))
	}
}

func (w *world) options() []testkit.Option {
	return []testkit.Option{
		testkit.Setup(func(context.Context) error { w.b.Store(newBilling(w.naive)); return nil }),
		testkit.Invariant("no attachment before its invoice", func(*runtime.Trace) error { return w.b.Load().check() }),
	}
}

func TestTraceThroughToolRunner(t *testing.T) {
	w := newWorld()
	tr, err := runtime.RunTraced(context.Background(), "billing-agent", w.agent(false))
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
	if c.Invocation != a.Invocation {
		t.Errorf("calls of one run in invocations %v and %v", c.Invocation, a.Invocation)
	}
}

func TestOneTurnDependentPairIsCaught(t *testing.T) {
	w := newWorld()
	rep := checked(t, testkit.Run(t, w.agent(true), w.options()...))
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
	// Some schedule of the runner's own concurrent dispatch ran attach
	// first: the world shows it.
	if !hasCode(rep, runtime.CodeInvariantFailed, runtime.ScenarioInterleaving+"/") {
		t.Errorf("no schedule ran attachInvoice before createInvoice; findings: %v", codes(rep))
	}
	if rep.Safe {
		t.Error("report says safe")
	}
}

// A schedule printed by a finding replays exactly, through the runner's
// own dispatch: the one that ran attachInvoice first fails the invariant
// again.
func TestScheduleReplays(t *testing.T) {
	w := newWorld()
	rep := checked(t, testkit.Run(t, w.agent(true), w.options()...))
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
		again := testkit.Run(t, w.agent(true), append(w.options(), testkit.Replay(sched))...)
		if !hasCode(again, runtime.CodeInvariantFailed, runtime.ScenarioInterleaving+"/"+sched) {
			t.Fatalf("replaying %s did not break the invariant again: %v", sched, codes(again))
		}
	}
}

// The sequential twin: the same tools and sink, the model waits for the
// invoice before attaching. Every scenario passes, and nothing is
// concurrent, so no schedule is explored.
func TestSequentialTwinPasses(t *testing.T) {
	w := newWorld()
	rep := checked(t, testkit.TestAgent(t, w.agent(false), w.options()...))
	if !rep.Safe {
		t.Fatalf("sequential agent unsafe: %v", codes(rep))
	}
	if rep.InconclusiveCount != 0 {
		t.Errorf("%d inconclusive scenarios: a fault did not fire through the wrapper", rep.InconclusiveCount)
	}
	if n := len(rep.Results); n < 8 {
		t.Errorf("%d scenarios ran, want the faults of both writes", n)
	}
	for _, r := range rep.Results {
		if strings.HasPrefix(r.Scenario, runtime.ScenarioInterleaving+"/") {
			t.Errorf("schedule %s explored for calls that never overlap", r.Scenario)
		}
	}
}

// An injected fault reaches the model as the runner reports any tool
// error, an is_error tool_result, and the model's retry is what the suite
// then judges: the sink replays it, so there is no duplicate.
func TestFaultReachesTheModel(t *testing.T) {
	w := newWorld()
	const sc = "lost_acknowledgement/createInvoice#1"
	rep := checked(t, testkit.Run(t, w.agent(false), append(w.options(), testkit.With(runtime.OnlyScenario(sc)))...))
	var res *runtime.Result
	for _, r := range rep.Results {
		if r.Scenario == sc {
			res = r
		}
	}
	if res == nil {
		t.Fatal("scenario did not run")
	}
	if !res.FaultFired || res.Failed {
		t.Errorf("fired %v failed %v error %q: the runner turns the injected timeout into a tool result and goes on", res.FaultFired, res.Failed, res.Error)
	}
	creates := res.Trace.Calls("createInvoice")
	if len(creates) != 2 {
		t.Fatalf("%d createInvoice calls, want the lost one and the model's retry", len(creates))
	}
	if creates[1].Status != runtime.StatusSuccess || !creates[1].Replayed {
		t.Errorf("the retry is %s (replayed %v), want a replayed success", creates[1].Status, creates[1].Replayed)
	}
	if len(rep.Findings) != 0 {
		t.Errorf("findings %v", codes(rep))
	}
}

// Without the sink's replay, the model's retry after a lost acknowledgement
// issues a second invoice: the suite names it.
func TestRetryWithoutIdempotentSinkIsCaught(t *testing.T) {
	w := newWorld()
	w.naive = true
	rep := checked(t, testkit.Run(t, w.agent(false), w.options()...))
	if !hasCode(rep, runtime.CodeDuplicateWrite, "lost_acknowledgement/createInvoice#1") {
		t.Errorf("the retried createInvoice is not a duplicate_write: %v", codes(rep))
	}
	if rep.Safe {
		t.Error("report says safe")
	}
}

func TestPassThroughWhenInactive(t *testing.T) {
	w := newWorld()
	if err := w.agent(true)(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := w.b.Load()
	if len(b.invoices) != 1 || len(b.attached) != 1 {
		t.Errorf("invoices %v attached %v", b.invoices, b.attached)
	}
}

func TestToolsNotInSpecsAreUnchanged(t *testing.T) {
	b := newBilling(false)
	create, err := toolrunner.NewBetaToolFromJSONSchema("createInvoice", "create an invoice", b.create)
	if err != nil {
		t.Fatal(err)
	}
	other, err := toolrunner.NewBetaToolFromJSONSchema("other", "not described", b.attach)
	if err != nil {
		t.Fatal(err)
	}
	got := agentidemanthropic.Wrap(specs, []anthropic.BetaTool{create, other, nil})
	if len(got) != 3 || got[1] != other || got[2] != nil {
		t.Fatalf("wrapped %v", got)
	}
	if got[0] == create || got[0].Name() != "createInvoice" || got[0].Description() != "create an invoice" {
		t.Errorf("createInvoice not wrapped, or its name and description changed")
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

// A model that, when createInvoice fails, asks for another invoice for the
// same customer under a new id: a retry with a fresh key, or other work,
// and nothing tells which. The SDK's tool runner calls the wrapped tool
// itself, so the site of every call is the runner's line, whatever the
// model asked: identity_unstable is a warning there, as through every
// adapter. It was an error, the runner's line taken for the agent's.
func TestAnotherKeyAfterAFailureThroughTheRunnerIsAWarning(t *testing.T) {
	w := newWorld()
	again := apiBlock{Name: "createInvoice", Input: json.RawMessage(`{"invoice_id":"INV-2","customer":"acme"}`)}
	script := retryScript(again, "Invoice INV-1 is filed and order ORD-9 is attached.")
	agent := func(ctx context.Context) error {
		b := w.b.Load()
		create, err := toolrunner.NewBetaToolFromJSONSchema("createInvoice", "create an invoice", b.create)
		if err != nil {
			return err
		}
		return runScripted(ctx, script, create)
	}
	rep := checked(t, testkit.Run(t, agent, testkit.Setup(func(context.Context) error { w.b.Store(newBilling(false)); return nil })))
	f := first(t, rep, runtime.CodeIdentityUnstable)
	if f.Severity != runtime.SeverityWarning {
		t.Errorf("identity_unstable is an %s: %s", f.Severity, f.Message)
	}
	for _, e := range rep.Errors() {
		if e.Code == runtime.CodeIdentityUnstable {
			t.Errorf("%s: %s", e.Scenario, e.Message)
		}
	}
}

// The runner's line is an adapter's site whatever called the wrapped tool
// first in the process: the mark was made once per Begin call instruction,
// and an agent that had called a wrapped tool itself before left the
// runner's line unmarked, identity_unstable an error again (found by
// review). The agent's own line stays its own.
func TestRunnerSiteIsTheAdaptersAfterADirectCall(t *testing.T) {
	w := newWorld()
	direct := func(ctx context.Context) error {
		b := w.b.Load()
		create, err := toolrunner.NewBetaToolFromJSONSchema("createInvoice", "create an invoice", b.create)
		if err != nil {
			return err
		}
		tools := agentidemanthropic.Wrap(specs, []anthropic.BetaTool{create})
		_, err = tools[0].Execute(ctx, createCall.Input) // the agent's own dispatch
		return err
	}
	tr, err := runtime.RunTraced(context.Background(), t.Name()+"/direct", direct)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Ops) != 1 || !strings.Contains(tr.Ops[0].Site, "anthropic_test.go:") {
		t.Fatalf("the direct call's site is %v, want this file's line", tr.Ops)
	}
	TestAnotherKeyAfterAFailureThroughTheRunnerIsAWarning(t)
}
