package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/internal/bank"
	"github.com/agentidem/agentidem-go/adapters/mcp/mcpgo"
	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// world is a bank served by a real mcp-go server, and a real mcp-go client
// connected to it in-process.
type world struct {
	bank atomic.Pointer[bank.Bank]
	srv  *server.MCPServer
	c    *client.Client
	// meta also sends the run token in _meta, the way a client over a
	// transport that drops the context does.
	meta bool
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, bank.Tools)
}

// newWorldWith is newWorld with the middleware given tools.
func newWorldWith(t *testing.T, tools agentidemmcp.Tools) *world {
	t.Helper()
	w := &world{}
	w.bank.Store(bank.New())
	srv := server.NewMCPServer("bank", "1.0.0",
		server.WithToolCapabilities(false),
		server.WithToolHandlerMiddleware(mcpgo.Middleware(tools)))
	srv.AddTool(mcp.NewTool("get_payment", mcp.WithDescription("read a payment"),
		mcp.WithString("payment_id", mcp.Required())),
		mcp.NewStructuredToolHandler(func(ctx context.Context, _ mcp.CallToolRequest, in bank.GetPaymentIn) (bank.Payment, error) {
			return w.bank.Load().GetPayment(ctx, in)
		}))
	srv.AddTool(mcp.NewTool("refund", mcp.WithDescription("refund a payment"),
		mcp.WithString("payment_id", mcp.Required()), mcp.WithString("idempotency_key"), mcp.WithString("card_token")),
		mcp.NewStructuredToolHandler(func(ctx context.Context, _ mcp.CallToolRequest, in bank.RefundIn) (bank.Receipt, error) {
			return w.bank.Load().Refund(ctx, in)
		}))

	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "agent", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w.srv, w.c = srv, c
	return w
}

// call is the bank.Caller over the client.
func (w *world) call(ctx context.Context, tool string, args map[string]any) (json.RawMessage, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	if w.meta {
		req.Params.Meta = mcpgo.Meta(ctx)
	}
	res, err := w.c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		var msg []string
		for _, c := range res.Content {
			if t, ok := mcp.AsTextContent(c); ok {
				msg = append(msg, t.Text)
			}
		}
		return nil, errors.New(strings.Join(msg, "; "))
	}
	return json.Marshal(res.StructuredContent)
}

func (w *world) options() []testkit.Option {
	return []testkit.Option{
		testkit.Setup(func(context.Context) error { w.bank.Store(bank.New()); return nil }),
		testkit.Invariant("no payment refunded twice", func(*runtime.Trace) error { return w.bank.Load().Check() }),
	}
}

func TestTraceThroughServer(t *testing.T) {
	for _, meta := range []bool{false, true} {
		t.Run(fmt.Sprintf("meta=%v", meta), func(t *testing.T) {
			w := newWorld(t)
			w.meta = meta
			tr, err := runtime.RunTraced(context.Background(), "refund-client", bank.Client{Call: w.call}.Run)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(tr.Ops); got != 6 {
				t.Fatalf("traced %d calls, want 6 (3 reads, 3 refunds): %+v", got, tr.Ops)
			}
			if n := tr.Effects("refund"); n != 3 {
				t.Errorf("refund effects = %d, want 3", n)
			}
			for _, o := range tr.Calls("refund") {
				b, _ := json.Marshal(o.Args)
				if strings.Contains(string(b), "tok_secret") || !strings.Contains(string(b), "[redacted]") {
					t.Errorf("card token not redacted in %s", b)
				}
				if !strings.HasPrefix(o.Identity, `"pay-`) {
					t.Errorf("identity %q, want the payment id", o.Identity)
				}
			}
		})
	}
}

func TestToolErrorIsAFailedCall(t *testing.T) {
	w := newWorld(t)
	tr, err := runtime.RunTraced(context.Background(), "bad-refund", func(ctx context.Context) error {
		_, err := w.call(ctx, "refund", map[string]any{"payment_id": "pay-404"})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("want the tool's error, got %v", err)
	}
	calls := tr.Calls("refund")
	if len(calls) != 1 || calls[0].Status != runtime.StatusFailed || calls[0].Effective() {
		t.Fatalf("a result with isError must be recorded as a failed call, got %+v", calls)
	}
}

func TestNaiveClientIsCaught(t *testing.T) {
	w := newWorld(t)
	rep := checked(t, testkit.Run(t, bank.Client{Call: w.call}.Run, w.options()...))
	if !rep.BaselineSucceeded {
		t.Fatalf("baseline failed: %s", rep.BaselineFailure)
	}
	if rep.Safe {
		t.Fatal("the naive client retried a refund whose acknowledgement was lost, and the report says safe")
	}
	for k := 1; k <= 3; k++ {
		sc := fmt.Sprintf("lost_acknowledgement/refund#%d", k)
		if !bank.Has(rep, sc, runtime.CodeDuplicateWrite) {
			t.Errorf("no duplicate_write in %s; findings: %v", sc, bank.Codes(rep))
		}
	}
	for _, sc := range []string{"before_operation_failure/refund#1", "lost_request/refund#1", "duplicate_delivery/sequential"} {
		if res := bank.Result(rep, sc); res == nil || !res.Safe {
			t.Errorf("%s: want safe (a retry after a call that did not run is fine), got %+v", sc, res)
		}
	}
}

func TestKeyedClientIsSafe(t *testing.T) {
	w := newWorld(t)
	rep := checked(t, testkit.TestAgent(t, bank.Client{Keyed: true, Call: w.call}.Run, w.options()...))
	if !rep.Safe {
		t.Fatalf("keyed client reported unsafe: %v", bank.Codes(rep))
	}
	if rep.InconclusiveCount != 0 {
		t.Errorf("%d inconclusive scenarios: a fault did not fire through the middleware", rep.InconclusiveCount)
	}
}

func TestPassThroughWhenInactive(t *testing.T) {
	w := newWorld(t)
	if err := (bank.Client{Call: w.call}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := w.bank.Load().Refunds(); n != 3 {
		t.Errorf("refunds = %d, want 3", n)
	}
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

// A Tools key "refnd" for the server's refund tool left refund untraced:
// with get_payment traced, the suite passed the client as SAFE without
// ever faulting its refunds (fixed or not, it could not tell). The call of the misspelt tool is now
// refused while the suite runs, and the baseline fails naming the key and
// the tool; production is untouched.
func TestMisspeltKeyFailsTheSuite(t *testing.T) {
	misspelt := agentidemmcp.Tools{
		"get_payment": bank.Tools["get_payment"],
		"refnd":       agentidemmcp.Write(agentidemmcp.Identity("payment_id")),
	}
	w := newWorldWith(t, misspelt)
	rep := checked(t, testkit.Run(t, bank.Client{Keyed: true, Call: w.call}.Run, w.options()...))
	const want = `Tools key "refnd" names no tool of this server (did you mean "refund"?)`
	if rep.Safe || !strings.Contains(rep.BaselineFailure, want) {
		t.Fatalf("safe %v, baseline failure %q; want the suite failed with %s", rep.Safe, rep.BaselineFailure, want)
	}
	if err := (bank.Client{Keyed: true, Call: w.call}).Run(context.Background()); err != nil {
		t.Errorf("no run active: the call must go through, got %v", err)
	}
}
