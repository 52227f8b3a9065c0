package gosdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/adapters/mcp/internal/bank"
	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// world is a bank served by a real go-sdk MCP server. Each invocation of
// the agent connects a real client session to it over the SDK's in-memory
// transports: the connection's goroutines then belong to the invocation,
// which is what lets the scheduler see every call of it (a session opened
// outside the agent runs its handlers outside the schedule's bubble).
type world struct {
	bank atomic.Pointer[bank.Bank]
	srv  *mcp.Server
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
	srv := mcp.NewServer(&mcp.Implementation{Name: "bank", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "get_payment", Description: "read a payment"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in bank.GetPaymentIn) (*mcp.CallToolResult, bank.Payment, error) {
			p, err := w.bank.Load().GetPayment(ctx, in)
			return nil, p, err
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "refund", Description: "refund a payment"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in bank.RefundIn) (*mcp.CallToolResult, bank.Receipt, error) {
			r, err := w.bank.Load().Refund(ctx, in)
			return nil, r, err
		})
	srv.AddReceivingMiddleware(gosdk.Middleware(tools))
	w.srv = srv
	return w
}

// agent is one invocation of the scripted client: connect, refund every
// payment in parallel, disconnect.
func (w *world) agent(keyed bool) func(context.Context) error {
	return func(ctx context.Context) error {
		cs, stop, err := w.connect(ctx)
		if err != nil {
			return err
		}
		defer stop()
		return bank.Client{Keyed: keyed, Call: caller(cs)}.Run(ctx)
	}
}

func (w *world) connect(ctx context.Context) (*mcp.ClientSession, func(), error) {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := w.srv.Connect(context.WithoutCancel(ctx), st, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("server connect: %w", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
	client.AddSendingMiddleware(gosdk.Propagate())
	cs, err := client.Connect(context.WithoutCancel(ctx), ct, nil)
	if err != nil {
		ss.Close()
		return nil, nil, fmt.Errorf("client connect: %w", err)
	}
	return cs, func() { cs.Close(); ss.Wait() }, nil
}

// caller is the bank.Caller over a client session.
func caller(cs *mcp.ClientSession) bank.Caller {
	return func(ctx context.Context, tool string, args map[string]any) (json.RawMessage, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return nil, err
		}
		if res.IsError {
			var msg []string
			for _, c := range res.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					msg = append(msg, t.Text)
				}
			}
			return nil, errors.New(strings.Join(msg, "; "))
		}
		return json.Marshal(res.StructuredContent)
	}
}

func (w *world) options() []testkit.Option {
	return []testkit.Option{
		testkit.Setup(func(context.Context) error { w.bank.Store(bank.New()); return nil }),
		testkit.Invariant("no payment refunded twice", func(*runtime.Trace) error { return w.bank.Load().Check() }),
	}
}

func TestTraceThroughServer(t *testing.T) {
	w := newWorld(t)
	tr, err := runtime.RunTraced(context.Background(), "refund-client", w.agent(false))
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
		if o.Invocation != 1 || o.Status != runtime.StatusSuccess || o.Kind != runtime.KindWrite {
			t.Errorf("refund call %s: invocation %d, status %s, kind %s", o.ID, o.Invocation, o.Status, o.Kind)
		}
		b, _ := json.Marshal(o.Args)
		if strings.Contains(string(b), "tok_secret") || !strings.Contains(string(b), "[redacted]") {
			t.Errorf("card token not redacted in %s", b)
		}
		if !strings.HasPrefix(o.Identity, `"pay-`) {
			t.Errorf("identity %q, want the payment id", o.Identity)
		}
	}
	// The calls ran in parallel on the server: all three reads started
	// before the last refund finished.
	if w.bank.Load().Refunds() != 3 {
		t.Errorf("refunds = %d, want 3", w.bank.Load().Refunds())
	}
}

func TestToolErrorIsAFailedCall(t *testing.T) {
	w := newWorld(t)
	tr, err := runtime.RunTraced(context.Background(), "bad-refund", func(ctx context.Context) error {
		cs, stop, err := w.connect(ctx)
		if err != nil {
			return err
		}
		defer stop()
		_, err = caller(cs)(ctx, "refund", map[string]any{"payment_id": "pay-404"})
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
	rep := checked(t, testkit.Run(t, w.agent(false), w.options()...))
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
	rep := checked(t, testkit.TestAgent(t, w.agent(true), w.options()...))
	if !rep.Safe {
		t.Fatalf("keyed client reported unsafe: %v", bank.Codes(rep))
	}
	if rep.InconclusiveCount != 0 {
		t.Errorf("%d inconclusive scenarios: a fault did not fire through the middleware", rep.InconclusiveCount)
	}
	res := bank.Result(rep, "lost_acknowledgement/refund#1")
	if res == nil {
		t.Fatal("no lost_acknowledgement/refund#1 scenario")
	}
	replayed := 0
	for _, o := range res.Trace.Calls("refund") {
		if o.Replayed {
			replayed++
		}
	}
	if replayed != 1 {
		t.Errorf("want the retry answered from the idempotency key (1 replayed call), got %d", replayed)
	}
}

func TestPassThroughWhenInactive(t *testing.T) {
	w := newWorld(t)
	if err := w.agent(false)(context.Background()); err != nil {
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

// Without Propagate the server handles calls on a context that carries no
// run; they are still attributed to the one active run, never silently
// left out of the trace.
func TestWithoutPropagateCallsAreStillTraced(t *testing.T) {
	w := newWorld(t)
	tr, err := runtime.RunTraced(context.Background(), "no-propagate", func(ctx context.Context) error {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := w.srv.Connect(context.WithoutCancel(ctx), st, nil)
		if err != nil {
			return err
		}
		defer ss.Wait()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil).Connect(context.WithoutCancel(ctx), ct, nil)
		if err != nil {
			return err
		}
		defer cs.Close()
		return bank.Client{Keyed: true, Call: caller(cs)}.Run(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tr.Calls("refund")); n != 3 {
		t.Fatalf("traced %d refunds, want 3", n)
	}
	// The tool still reaches the traced call through its context: a
	// repeat with the same key is recorded as replayed.
	tr, err = runtime.RunTraced(context.Background(), "no-propagate-repeat", func(ctx context.Context) error {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := w.srv.Connect(context.WithoutCancel(ctx), st, nil)
		if err != nil {
			return err
		}
		defer ss.Wait()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil).Connect(context.WithoutCancel(ctx), ct, nil)
		if err != nil {
			return err
		}
		defer cs.Close()
		args := map[string]any{"payment_id": "pay-1", "idempotency_key": "k-1"}
		for range 2 {
			if _, err := caller(cs)(ctx, "refund", args); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := tr.Calls("refund")
	if len(calls) != 2 || calls[0].Replayed || !calls[1].Replayed {
		t.Fatalf("want the second call replayed, got %+v", calls)
	}
}

// A Tools key "refnd" for the server's refund tool left refund untraced:
// with get_payment traced, the suite passed the client as SAFE without
// ever faulting its refunds. The middleware, which lists the server's
// tools, now refuses the misspelt tool's calls while the suite runs, and
// the baseline fails naming the key and the tool; production is
// untouched.
func TestMisspeltKeyFailsTheSuite(t *testing.T) {
	misspelt := agentidemmcp.Tools{
		"get_payment": bank.Tools["get_payment"],
		"refnd":       agentidemmcp.Write(agentidemmcp.Identity("payment_id")),
	}
	w := newWorldWith(t, misspelt)
	rep := checked(t, testkit.Run(t, w.agent(true), w.options()...))
	const want = `Tools key "refnd" names no tool of this server (did you mean "refund"?)`
	if rep.Safe || !strings.Contains(rep.BaselineFailure, want) {
		t.Fatalf("safe %v, baseline failure %q; want the suite failed with %s", rep.Safe, rep.BaselineFailure, want)
	}
	if err := w.agent(true)(context.Background()); err != nil {
		t.Errorf("no run active: the call must go through, got %v", err)
	}
}
