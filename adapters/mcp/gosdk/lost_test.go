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

// perInvocation is an agent that connects a client session (with
// Propagate) to s for each invocation, as gosdk/readme_test.go's does, and
// runs fn with it.
func perInvocation(s *mcp.Server, fn func(ctx context.Context, cs *mcp.ClientSession) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
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
		return fn(ctx, cs)
	}
}

// ticketDesk opens a ticket per request id it has not served.
type ticketDesk struct {
	mu       sync.Mutex
	tickets  []string
	requests map[string]bool
}

func (d *ticketDesk) open(ref, request string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.requests[request] {
		d.requests[request] = true
		d.tickets = append(d.tickets, ref)
	}
}

func (d *ticketDesk) snapshot() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string{}, d.tickets...)
}

// A client agent over MCP gives each call its own deadline and retries
// while errors.Is(err, context.DeadlineExceeded), as code that waits with a
// deadline does. An injected lost acknowledgement reached it as the
// server's text, which matched nothing: the retry never ran, and the agent
// that makes a fresh request id per attempt (opening the ticket again
// after a lost answer) passed. Through gosdk.Propagate the fault now
// matches the deadline, as in process: the fresh-id agent is caught in
// lost_acknowledgement, and the agent that keeps its request id passes.
func TestInjectedTimeoutMatchesTheClientsDeadline(t *testing.T) {
	type openIn struct {
		Ref     string `json:"ref"`
		Request string `json:"request_id"`
	}
	specs := agentidemmcp.Tools{"open_ticket": agentidemmcp.Write(agentidemmcp.Identity("ref"))}
	for _, fresh := range []bool{true, false} {
		t.Run(map[bool]string{true: "fresh request id", false: "one request id"}[fresh], func(t *testing.T) {
			var d *ticketDesk
			s := mcp.NewServer(&mcp.Implementation{Name: "desk", Version: "1"}, nil)
			mcp.AddTool(s, &mcp.Tool{Name: "open_ticket"}, func(ctx context.Context, _ *mcp.CallToolRequest, in openIn) (*mcp.CallToolResult, any, error) {
				d.open(in.Ref, in.Request)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "opened"}}}, nil, nil
			})
			s.AddReceivingMiddleware(gosdk.Middleware(specs))
			agent := perInvocation(s, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
				for attempt := 1; attempt <= 3; attempt++ {
					request := "open-ORD-9"
					if fresh {
						request = fmt.Sprintf("open-ORD-9-%d", attempt)
					}
					cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
					_, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "open_ticket", Arguments: map[string]any{"ref": "ORD-9", "request_id": request}})
					cancel()
					if !errors.Is(err, context.DeadlineExceeded) {
						return err
					}
				}
				return err
			})
			rep := testkit.Run(t, agent, testkit.NoSummary(),
				testkit.With(runtime.OnlyScenario(runtime.ScenarioLostAck+"/open_ticket#1")),
				testkit.Setup(func(context.Context) error { d = &ticketDesk{requests: map[string]bool{}}; return nil }),
				testkit.State(func() any { return d.snapshot() }))
			if len(rep.Results) != 1 {
				t.Fatalf("%d results, want lost_acknowledgement/open_ticket#1", len(rep.Results))
			}
			res := rep.Results[0]
			dup := false
			for _, f := range res.Findings {
				dup = dup || f.Code == runtime.CodeDuplicateWrite
			}
			if dup != fresh {
				t.Errorf("duplicate_write: %v, want %v (calls %d, error %q): %v", dup, fresh, len(res.Trace.Ops), res.Error, res.Findings)
			}
			if len(res.Trace.Ops) < 2 {
				t.Errorf("the agent did not retry after the lost acknowledgement: %d calls, error %q", len(res.Trace.Ops), res.Error)
			}
		})
	}
}
