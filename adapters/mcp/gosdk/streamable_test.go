package gosdk_test

import (
	"context"
	"net/http"
	"net/http/httptest"
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
	bank.TransportCases(t, func(t *testing.T, invoices, shared bool, run func(context.Context, bank.Caller) error) (func(context.Context) error, []testkit.Option) {
		if invoices {
			iw := newInvoiceWorld()
			agent, setup := httpAgent(t, iw.w.srv, shared, func() { iw.inv.Store(bank.NewInvoices()) }, run)
			return agent, []testkit.Option{setup, noEarlyAttach(iw)}
		}
		w := newWorld(t)
		agent, setup := httpAgent(t, w.srv, shared, func() { w.bank.Store(bank.New()) }, run)
		return agent, []testkit.Option{setup, noDoubleRefund(w)}
	}, checked)
}

func noDoubleRefund(w *world) testkit.Option {
	return testkit.Invariant("no payment refunded twice", func(*runtime.Trace) error { return w.bank.Load().Check() })
}

func noEarlyAttach(iw *invoiceWorld) testkit.Option {
	return testkit.Invariant("no attachment before its invoice", func(*runtime.Trace) error { return iw.inv.Load().Check() })
}
