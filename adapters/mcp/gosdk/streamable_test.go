package gosdk_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/adapters/mcp/internal/bank"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// overHTTP serves srv over streamable HTTP, as a deployed MCP server is,
// and returns the function that connects a client session to it. The
// session's client waits for each tool call's HTTP response while the
// call, which the server runs on a goroutine of its own, is parked at its
// start gate: before the runtime counted such a call as one that client
// waits for, every gated scenario stalled with the client "waiting for an
// HTTP response".
func overHTTP(t *testing.T, srv *mcp.Server) func(ctx context.Context) (*mcp.ClientSession, error) {
	t.Helper()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return func(ctx context.Context) (*mcp.ClientSession, error) {
		c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
		c.AddSendingMiddleware(gosdk.Propagate())
		return c.Connect(context.WithoutCancel(ctx), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	}
}

// httpAgent runs run over a session that each invocation connects
// (shared false), or over one session Setup connected once for every
// scenario (shared true).
func httpAgent(t *testing.T, srv *mcp.Server, shared bool, reset func(), run func(context.Context, bank.Caller) error) (func(context.Context) error, testkit.Option) {
	connect := overHTTP(t, srv)
	var cs *mcp.ClientSession
	t.Cleanup(func() {
		if cs != nil {
			cs.Close()
		}
	})
	setup := testkit.Setup(func(ctx context.Context) error {
		reset()
		if shared && cs == nil {
			var err error
			cs, err = connect(context.Background())
			return err
		}
		return nil
	})
	agent := func(ctx context.Context) error {
		s := cs
		if !shared {
			var err error
			if s, err = connect(ctx); err != nil {
				return err
			}
			defer s.Close()
		}
		return run(ctx, caller(s))
	}
	return agent, setup
}

func TestOverStreamableHTTP(t *testing.T) {
	for _, shared := range []bool{false, true} {
		session := "session per invocation"
		if shared {
			session = "shared session"
		}
		t.Run(session+"/naive refunds are caught", func(t *testing.T) {
			w := newWorld(t)
			agent, setup := httpAgent(t, w.srv, shared, func() { w.bank.Store(bank.New()) },
				func(ctx context.Context, call bank.Caller) error { return bank.Client{Call: call}.Run(ctx) })
			rep := checked(t, testkit.Run(t, agent, setup, noDoubleRefund(w), testkit.NoSummary()))
			if !rep.BaselineSucceeded {
				t.Fatalf("baseline failed: %s", rep.BaselineFailure)
			}
			for k := 1; k <= 3; k++ {
				sc := fmt.Sprintf("lost_acknowledgement/refund#%d", k)
				if !bank.Has(rep, sc, runtime.CodeDuplicateWrite) {
					t.Errorf("no duplicate_write in %s; findings: %v", sc, bank.Codes(rep))
				}
			}
			assertNoStall(t, rep)
		})
		t.Run(session+"/keyed refunds pass", func(t *testing.T) {
			w := newWorld(t)
			agent, setup := httpAgent(t, w.srv, shared, func() { w.bank.Store(bank.New()) },
				func(ctx context.Context, call bank.Caller) error {
					return bank.Client{Keyed: true, Call: call}.Run(ctx)
				})
			rep := checked(t, testkit.Run(t, agent, setup, noDoubleRefund(w), testkit.NoSummary()))
			if !rep.Safe || rep.InconclusiveCount != 0 {
				t.Errorf("keyed client: safe %v, %d inconclusive; findings: %v", rep.Safe, rep.InconclusiveCount, bank.Codes(rep))
			}
			assertNoStall(t, rep)
		})
		t.Run(session+"/dependent pair in one turn is caught", func(t *testing.T) {
			iw := newInvoiceWorld()
			agent, setup := httpAgent(t, iw.w.srv, shared, func() { iw.inv.Store(bank.NewInvoices()) },
				func(ctx context.Context, call bank.Caller) error {
					return bank.InvoiceClient{OneTurn: true, Call: call}.Run(ctx)
				})
			rep := checked(t, testkit.Run(t, agent, setup, noEarlyAttach(iw), testkit.NoSummary()))
			found := false
			for _, f := range rep.Findings {
				if f.Code == runtime.CodeDependentCallsConcurrent && strings.HasPrefix(f.Scenario, runtime.ScenarioInterleaving+"/") {
					found = true
				}
			}
			if !found {
				t.Errorf("no dependent_calls_concurrent in an interleaving; findings: %v", bank.Codes(rep))
			}
			assertNoStall(t, rep)
		})
		t.Run(session+"/dependent pair in order passes", func(t *testing.T) {
			iw := newInvoiceWorld()
			agent, setup := httpAgent(t, iw.w.srv, shared, func() { iw.inv.Store(bank.NewInvoices()) },
				func(ctx context.Context, call bank.Caller) error { return bank.InvoiceClient{Call: call}.Run(ctx) })
			rep := checked(t, testkit.Run(t, agent, setup, noEarlyAttach(iw), testkit.NoSummary()))
			if !rep.Safe || rep.InconclusiveCount != 0 {
				t.Errorf("in-order client: safe %v, %d inconclusive; findings: %v", rep.Safe, rep.InconclusiveCount, bank.Codes(rep))
			}
			assertNoStall(t, rep)
		})
	}
}

func noDoubleRefund(w *world) testkit.Option {
	return testkit.Invariant("no payment refunded twice", func(*runtime.Trace) error { return w.bank.Load().Check() })
}

func noEarlyAttach(iw *invoiceWorld) testkit.Option {
	return testkit.Invariant("no attachment before its invoice", func(*runtime.Trace) error { return iw.inv.Load().Check() })
}

// assertNoStall fails t when a scenario of rep stalled.
func assertNoStall(t *testing.T, rep *runtime.Report) {
	t.Helper()
	for _, p := range rep.Problems {
		if p.Code == runtime.CodeStalled {
			t.Errorf("%s stalled: %s", p.Scenario, p.Message)
		}
	}
}
