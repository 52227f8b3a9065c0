package gosdk_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// desk opens a ticket once per request id.
type desk struct {
	mu       sync.Mutex
	tickets  map[string]int
	requests map[string]bool
}

func (d *desk) open(ref, request string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.requests[request] {
		d.requests[request] = true
		d.tickets[ref]++
	}
}

func (d *desk) snapshot() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := map[string]int{}
	for k, v := range d.tickets {
		m[k] = v
	}
	return m
}

type openIn struct {
	Ref     string `json:"ref"`
	Request string `json:"request_id"`
}

// ticketSuite runs red team R4's agent: a client session that Setup
// connected once (Propagate installed), two tickets opened in parallel,
// each CallTool with a timeout on base(ctx), retried on DeadlineExceeded.
func ticketSuite(t *testing.T, base func(context.Context) context.Context) *runtime.Report {
	var d *desk
	s := mcp.NewServer(&mcp.Implementation{Name: "desk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "open_ticket"}, func(ctx context.Context, _ *mcp.CallToolRequest, in openIn) (*mcp.CallToolResult, any, error) {
		d.open(in.Ref, in.Request)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "opened " + in.Ref}}}, nil, nil
	})
	s.AddReceivingMiddleware(gosdk.Middleware(agentidemmcp.Tools{"open_ticket": agentidemmcp.Write(agentidemmcp.Identity("ref"))}))
	var cs *mcp.ClientSession
	t.Cleanup(func() {
		if cs != nil {
			cs.Close()
		}
	})
	agent := func(ctx context.Context) error {
		refs := []string{"ORD-1", "ORD-2"}
		errs := make([]error, len(refs))
		var wg sync.WaitGroup
		for i, ref := range refs {
			wg.Go(func() {
				for range 3 {
					cctx, cancel := context.WithTimeout(base(ctx), 5*time.Second)
					_, errs[i] = cs.CallTool(cctx, &mcp.CallToolParams{Name: "open_ticket", Arguments: map[string]any{"ref": ref, "request_id": "open-" + ref}})
					cancel()
					if !errors.Is(errs[i], context.DeadlineExceeded) {
						return
					}
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	return testkit.Run(t, agent, testkit.NoSummary(),
		testkit.Setup(func(context.Context) error {
			d = &desk{tickets: map[string]int{}, requests: map[string]bool{}}
			if cs != nil {
				return nil
			}
			st, ct := mcp.NewInMemoryTransports()
			if _, err := s.Connect(context.Background(), st, nil); err != nil {
				return err
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
			c.AddSendingMiddleware(gosdk.Propagate())
			var err error
			cs, err = c.Connect(context.Background(), ct, nil)
			return err
		}),
		testkit.State(func() any { return d.snapshot() }))
}

// TestDetachedCallToolIsRefusedForWhatItIs: a call whose CallTool was given
// context.Background() is still refused when two deliveries run at once
// (the documented behaviour: it cannot be told to be either's), once, and
// the refusal says what is true: the request's context did not carry the
// agent's invocation, and to pass the agent's ctx to CallTool. It said the
// call "has no context.Context parameter", which no MCP call lacks, in a
// second refusal of the same call (red team R4).
func TestDetachedCallToolIsRefusedForWhatItIs(t *testing.T) {
	rep := ticketSuite(t, func(context.Context) context.Context { return context.Background() })
	if rep.Safe {
		t.Fatalf("the detached agent passed: its refused calls were not reported")
	}
	var refusals []string
	for _, f := range rep.Findings {
		if f.Code == runtime.CodeContextDetached && f.Severity == runtime.SeverityError {
			refusals = append(refusals, f.Message)
		}
	}
	if len(refusals) == 0 {
		t.Fatalf("no context_detached refusal in %d findings", len(rep.Findings))
	}
	for _, m := range refusals {
		if strings.Contains(m, "no context.Context parameter") {
			t.Errorf("untrue refusal: %s", m)
		}
		if !strings.Contains(m, "over MCP on a request whose context does not carry the agent's invocation") || !strings.Contains(m, "pass the agent's ctx to CallTool") {
			t.Errorf("the refusal does not say what happened and what to do: %s", m)
		}
	}
}

// TestAgentCtxInCallToolIsNotRefused: the same agent passing its ctx to
// CallTool, over the same session, is attributed call by call and passes.
func TestAgentCtxInCallToolIsNotRefused(t *testing.T) {
	rep := ticketSuite(t, func(ctx context.Context) context.Context { return ctx })
	for _, f := range rep.Findings {
		t.Errorf("finding %s: %s", f.Code, f.Message)
	}
	if !rep.Safe {
		t.Errorf("the agent passing its ctx to CallTool is unsafe")
	}
}

// TestSessionKeptFromAnEndedRun: a session connected inside one run, with
// its context, and kept for the next (a client made once, on first use):
// its server serves the next run's calls on a context that carries the
// ended run. A call that comes without the token (CallTool given
// context.Background()) is not lost to the run active now: it is traced
// there, as one whose context does not come from the agent's, or refused
// with a reason; never run untraced in silence.
func TestSessionKeptFromAnEndedRun(t *testing.T) {
	w := newWorld(t)
	var cs *mcp.ClientSession
	var ss *mcp.ServerSession
	defer func() {
		if cs != nil {
			cs.Close()
			ss.Wait()
		}
	}()
	if _, err := runtime.RunTraced(context.Background(), "first", func(ctx context.Context) error {
		st, ct := mcp.NewInMemoryTransports()
		var err error
		if ss, err = w.srv.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
			return err
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
		c.AddSendingMiddleware(gosdk.Propagate())
		if cs, err = c.Connect(context.WithoutCancel(ctx), ct, nil); err != nil {
			return err
		}
		_, err = caller(cs)(ctx, "get_payment", map[string]any{"payment_id": "pay-1"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	tr, err := runtime.RunTraced(context.Background(), "second", func(ctx context.Context) error {
		_, err := caller(cs)(context.Background(), "refund", map[string]any{"payment_id": "pay-1", "idempotency_key": "k-1"})
		return err
	})
	t.Logf("err %v; refunds %d; detached %v; refused %v", err, len(tr.Calls("refund")), tr.Detached, tr.Refused)
	if len(tr.Calls("refund")) == 0 && len(tr.Refused) == 0 {
		t.Fatalf("the refund ran untraced and unreported (err %v)", err)
	}
}
