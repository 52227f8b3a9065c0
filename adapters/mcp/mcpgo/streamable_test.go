package mcpgo_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/agentidem/agentidem-go/adapters/mcp/internal/bank"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// overHTTP serves srv over streamable HTTP, or over SSE (sse), as a
// deployed MCP server is, and returns the function that starts a client of
// it. The client sends the run's token in each call's _meta (world.meta):
// the server's handler runs the tool on a context of its own.
//
// Over streamable HTTP the client waits for the HTTP response while the
// call is parked at its start gate: before the runtime counted such a call
// as one that client waits for, every gated scenario stalled with the
// client "waiting for an HTTP response". Over SSE the POST is answered at
// once, the call goes on through the server's goroutines, and the client
// waits on a channel: before Meta counted the call as in transit until the
// server's middleware received it, a client connected once (in Setup) let
// the agent look quiet with a call of its turn still on its way, and the
// calls of one turn were sometimes played one after the other.
func overHTTP(t *testing.T, srv *server.MCPServer, sse bool) func(ctx context.Context) (*client.Client, error) {
	t.Helper()
	var hs *httptest.Server
	newClient := func() (*client.Client, error) { return client.NewStreamableHttpClient(hs.URL) }
	if sse {
		s := server.NewSSEServer(srv)
		hs = httptest.NewServer(s)
		server.WithBaseURL(hs.URL)(s)
		newClient = func() (*client.Client, error) { return client.NewSSEMCPClient(hs.URL + "/sse") }
	} else {
		hs = httptest.NewServer(server.NewStreamableHTTPServer(srv))
	}
	t.Cleanup(hs.Close)
	return func(ctx context.Context) (*client.Client, error) {
		c, err := newClient()
		if err != nil {
			return nil, err
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		// The SSE stream lives as long as the client, not the call.
		if err := c.Start(context.WithoutCancel(ctx)); err != nil {
			c.Close()
			return nil, err
		}
		if _, err := c.Initialize(ctx, init); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
}

// httpAgent runs run over a client that each invocation starts (shared
// false), or over one client Setup started once for every scenario
// (shared true).
func httpAgent(t *testing.T, srv *server.MCPServer, sse, shared bool, reset func(), run func(context.Context, bank.Caller) error) (func(context.Context) error, testkit.Option) {
	connect := overHTTP(t, srv, sse)
	var c *client.Client
	t.Cleanup(func() {
		if c != nil {
			c.Close()
		}
	})
	setup := testkit.Setup(func(ctx context.Context) error {
		reset()
		if shared && c == nil {
			var err error
			c, err = connect(context.Background())
			return err
		}
		return nil
	})
	agent := func(ctx context.Context) error {
		cl := c
		if !shared {
			var err error
			if cl, err = connect(ctx); err != nil {
				return err
			}
			defer cl.Close()
		}
		return run(ctx, (&world{c: cl, meta: true}).call)
	}
	return agent, setup
}

func TestOverStreamableHTTP(t *testing.T) { bank.TransportCases(t, agentsOver(false), checked) }

func TestOverSSE(t *testing.T) { bank.TransportCases(t, agentsOver(true), checked) }

// agentsOver builds the bank and invoice agents over streamable HTTP, or
// over SSE.
func agentsOver(sse bool) bank.Agents {
	return func(t *testing.T, invoices, shared bool, run func(context.Context, bank.Caller) error) (func(context.Context) error, []testkit.Option) {
		if invoices {
			iw := newInvoiceWorld(t)
			agent, setup := httpAgent(t, iw.w.srv, sse, shared, func() { iw.inv.Store(bank.NewInvoices()) }, run)
			return agent, []testkit.Option{setup, noEarlyAttach(iw)}
		}
		w := newWorld(t)
		agent, setup := httpAgent(t, w.srv, sse, shared, func() { w.bank.Store(bank.New()) }, run)
		return agent, []testkit.Option{setup, noDoubleRefund(w)}
	}
}

// The two calls of one turn, sent over SSE through a client Setup
// connected once, are one round on every run: dependent_calls_concurrent is
// found each time, and no call is told by its goroutine (context_detached).
// Before Meta counted the call in transit, 2 to 3 in 60 suites played the
// calls one after the other on a loaded machine.
func TestOneTurnOverASharedSSEClientIsTheSameEveryRun(t *testing.T) {
	iw := newInvoiceWorld(t)
	agent, setup := httpAgent(t, iw.w.srv, true, true, func() { iw.inv.Store(bank.NewInvoices()) },
		func(ctx context.Context, call bank.Caller) error {
			return bank.InvoiceClient{OneTurn: true, Call: call}.Run(ctx)
		})
	for i := range 20 {
		rep := checked(t, testkit.Run(silent{t}, agent, setup, noEarlyAttach(iw), testkit.NoSummary()))
		found := false
		for _, f := range rep.Findings {
			found = found || f.Code == runtime.CodeDependentCallsConcurrent
			if f.Code == runtime.CodeContextDetached {
				t.Errorf("suite %d: %s: %s", i, f.Scenario, f.Message)
			}
		}
		if !found {
			t.Errorf("suite %d: no dependent_calls_concurrent; findings: %v", i, bank.Codes(rep))
		}
	}
}

// silent is a TB without subtests or logs, for repeated suites.
type silent struct{ t *testing.T }

func (s silent) Helper()               {}
func (s silent) Name() string          { return s.t.Name() }
func (s silent) Errorf(string, ...any) {}
func (s silent) Logf(string, ...any)   {}

func noDoubleRefund(w *world) testkit.Option {
	return testkit.Invariant("no payment refunded twice", func(*runtime.Trace) error { return w.bank.Load().Check() })
}

func noEarlyAttach(iw *invoiceWorld) testkit.Option {
	return testkit.Invariant("no attachment before its invoice", func(*runtime.Trace) error { return iw.inv.Load().Check() })
}
