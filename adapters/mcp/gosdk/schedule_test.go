package gosdk_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/adapters/mcp/internal/bank"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// invoiceWorld serves the invoice tools through a go-sdk server; each
// invocation connects its own session (see world).
type invoiceWorld struct {
	inv atomic.Pointer[bank.Invoices]
	w   *world
}

func newInvoiceWorld() *invoiceWorld {
	iw := &invoiceWorld{}
	iw.inv.Store(bank.NewInvoices())
	srv := mcp.NewServer(&mcp.Implementation{Name: "billing", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "create_invoice", Description: "create an invoice"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in bank.CreateIn) (*mcp.CallToolResult, any, error) {
			out, err := iw.inv.Load().Create(ctx, in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil, err
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "attach_invoice", Description: "attach an order to an invoice"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in bank.AttachIn) (*mcp.CallToolResult, any, error) {
			out, err := iw.inv.Load().Attach(ctx, in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil, err
		})
	srv.AddReceivingMiddleware(gosdk.Middleware(bank.InvoiceTools))
	iw.w = &world{srv: srv}
	return iw
}

func (iw *invoiceWorld) agent(oneTurn bool) func(context.Context) error {
	return func(ctx context.Context) error {
		cs, stop, err := iw.w.connect(ctx)
		if err != nil {
			return err
		}
		defer stop()
		return bank.InvoiceClient{OneTurn: oneTurn, Call: caller(cs)}.Run(ctx)
	}
}

func (iw *invoiceWorld) options() []testkit.Option {
	return []testkit.Option{
		testkit.Setup(func(context.Context) error { iw.inv.Store(bank.NewInvoices()); return nil }),
		testkit.Invariant("no attachment before its invoice", func(*runtime.Trace) error { return iw.inv.Load().Check() }),
	}
}

// The schedule explorer gates both calls in the server middleware, on the
// session's handler goroutines, and releases them in every order.
func TestDependentPairOverMCPIsCaught(t *testing.T) {
	iw := newInvoiceWorld()
	rep := checked(t, testkit.Run(t, iw.agent(true), iw.options()...))
	found, dangling := false, false
	for _, f := range rep.Findings {
		inter := strings.HasPrefix(f.Scenario, runtime.ScenarioInterleaving+"/")
		if f.Code == runtime.CodeDependentCallsConcurrent && inter && strings.Join(f.Ops, ",") == "create_invoice,attach_invoice" {
			found = true
		}
		if f.Code == runtime.CodeInvariantFailed && inter {
			dangling = true
		}
	}
	if !found || !dangling {
		t.Errorf("dependent_calls_concurrent %v, attach-first schedule %v; findings: %v", found, dangling, bank.Codes(rep))
	}
}

func TestDependentPairInOrderPasses(t *testing.T) {
	iw := newInvoiceWorld()
	rep := checked(t, testkit.TestAgent(t, iw.agent(false), iw.options()...))
	if !rep.Safe {
		t.Errorf("in-order client unsafe: %v", bank.Codes(rep))
	}
}
