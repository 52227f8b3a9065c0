package gosdk_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// perInvocationSuite is ticketSuite's agent (each CallTool with a timeout
// on context.Background(), retried on DeadlineExceeded) with a session
// connected per invocation, with context.WithoutCancel(ctx), as red team
// rtL's TestOneRequestIDDetachedPerInv. fresh gives each attempt a
// request id of its own: the desk then opens a ticket per attempt.
func perInvocationSuite(t *testing.T, fresh bool) *runtime.Report {
	var d *desk
	s := mcp.NewServer(&mcp.Implementation{Name: "desk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "open_ticket"}, func(ctx context.Context, _ *mcp.CallToolRequest, in openIn) (*mcp.CallToolResult, any, error) {
		d.open(in.Ref, in.Request)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "opened " + in.Ref}}}, nil, nil
	})
	s.AddReceivingMiddleware(gosdk.Middleware(agentidemmcp.Tools{"open_ticket": agentidemmcp.Write(agentidemmcp.Identity("ref"))}))
	agent := func(ctx context.Context) error {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := s.Connect(context.WithoutCancel(ctx), st, nil)
		if err != nil {
			return err
		}
		defer ss.Wait()
		c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
		c.AddSendingMiddleware(gosdk.Propagate())
		cs, err := c.Connect(context.WithoutCancel(ctx), ct, nil)
		if err != nil {
			ss.Close()
			return err
		}
		defer cs.Close()
		refs := []string{"ORD-1", "ORD-2"}
		errs := make([]error, len(refs))
		var wg sync.WaitGroup
		for i, ref := range refs {
			wg.Go(func() {
				for attempt := range 3 {
					req := "open-" + ref
					if fresh {
						req = fmt.Sprintf("open-%s-%d", ref, attempt)
					}
					cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					_, errs[i] = cs.CallTool(cctx, &mcp.CallToolParams{Name: "open_ticket", Arguments: map[string]any{"ref": ref, "request_id": req}})
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
			return nil
		}),
		testkit.State(func() any { return d.snapshot() }))
}

// TestDetachedCallToolOnASessionPerInvocationIsTheInvocations: red team
// rtL saw the shared session's agent warned (context_detached: "attributed
// by its goroutine") and the same client code on a session connected per
// invocation not warned, and asked whether its calls went unseen. They do
// not: the server serves them on the session's context, which carries the
// invocation that connected it (WithoutCancel keeps a context's values),
// so each call is its delivery's by its context, as a call given the
// agent's ctx is, with no guess by goroutine to warn of; with two
// deliveries at once, each has its 2 calls, none refused. The agent that
// sends a fresh request id per attempt is caught where a lost
// acknowledgement makes it retry, as with the agent's ctx.
func TestDetachedCallToolOnASessionPerInvocationIsTheInvocations(t *testing.T) {
	rep := perInvocationSuite(t, false)
	for _, f := range rep.Findings {
		t.Errorf("keyed agent: finding %s: %s", f.Code, f.Message)
	}
	if !rep.Safe || rep.InconclusiveCount != 0 {
		t.Errorf("keyed agent: safe %v, %d inconclusive", rep.Safe, rep.InconclusiveCount)
	}
	for _, res := range rep.Results {
		if res.Scenario == runtime.ScenarioDuplicateConcurrent && (res.Trace == nil || len(res.Trace.Ops) != 4) {
			t.Errorf("%s: want the 4 calls of both deliveries traced, got %v", res.Scenario, res.Trace)
		}
	}

	buggy := perInvocationSuite(t, true)
	caught := map[string]bool{}
	for _, f := range buggy.Findings {
		if f.Code == runtime.CodeDuplicateWrite {
			caught[f.Scenario] = true
		}
	}
	if buggy.Safe || !caught["lost_acknowledgement/open_ticket#1"] || !caught["lost_acknowledgement/open_ticket#2"] {
		t.Errorf("fresh request id per attempt: safe %v, duplicate_write in %v; want both lost_acknowledgement scenarios", buggy.Safe, caught)
	}
}
