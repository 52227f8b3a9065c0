package mcpgo_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentidem/agentidem-go/adapters/mcp/internal/bank"
	"github.com/agentidem/agentidem-go/adapters/mcp/mcpgo"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// invoiceWorld serves the invoice tools through mcp-go, in-process.
type invoiceWorld struct {
	inv atomic.Pointer[bank.Invoices]
	w   *world
}

func newInvoiceWorld(t *testing.T) *invoiceWorld {
	t.Helper()
	iw := &invoiceWorld{}
	iw.inv.Store(bank.NewInvoices())
	srv := server.NewMCPServer("billing", "1.0.0", server.WithToolHandlerMiddleware(mcpgo.Middleware(bank.InvoiceTools)))
	srv.AddTool(mcp.NewTool("create_invoice", mcp.WithString("invoice_id", mcp.Required())),
		mcp.NewStructuredToolHandler(func(ctx context.Context, _ mcp.CallToolRequest, in bank.CreateIn) (string, error) {
			return iw.inv.Load().Create(ctx, in)
		}))
	srv.AddTool(mcp.NewTool("attach_invoice", mcp.WithString("invoice_id", mcp.Required()), mcp.WithString("order_id", mcp.Required())),
		mcp.NewStructuredToolHandler(func(ctx context.Context, _ mcp.CallToolRequest, in bank.AttachIn) (string, error) {
			return iw.inv.Load().Attach(ctx, in)
		}))
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	iw.w = &world{srv: srv, c: c}
	return iw
}

func (iw *invoiceWorld) options() []testkit.Option {
	return []testkit.Option{
		testkit.Setup(func(context.Context) error { iw.inv.Store(bank.NewInvoices()); return nil }),
		testkit.Invariant("no attachment before its invoice", func(*runtime.Trace) error { return iw.inv.Load().Check() }),
	}
}

// The schedule explorer gates both calls in the middleware and releases
// them in every order: the pair sent at once is caught, and so is the
// order that attaches first.
func TestDependentPairOverMCPIsCaught(t *testing.T) {
	iw := newInvoiceWorld(t)
	rep := checked(t, testkit.Run(t, bank.InvoiceClient{OneTurn: true, Call: iw.w.call}.Run, iw.options()...))
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
	iw := newInvoiceWorld(t)
	rep := checked(t, testkit.TestAgent(t, bank.InvoiceClient{Call: iw.w.call}.Run, iw.options()...))
	if !rep.Safe {
		t.Errorf("in-order client unsafe: %v", bank.Codes(rep))
	}
}
