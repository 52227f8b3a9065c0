package mcpgo_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/mcpgo"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// statuses is a world where set_status sets an order's status: a repeat
// with the same arguments changes nothing.
type statuses struct {
	mu sync.Mutex
	m  map[string]string
}

// annotatedClient serves set_status and get_status with mcp-go's own
// annotation options (or none) and returns an in-process client.
func annotatedClient(t *testing.T, st **statuses, annotate bool, tools agentidemmcp.Tools) *client.Client {
	t.Helper()
	srv := server.NewMCPServer("orders", "1.0.0", server.WithToolHandlerMiddleware(mcpgo.Middleware(tools)))
	setOpts := []mcp.ToolOption{mcp.WithString("order_id", mcp.Required()), mcp.WithString("status", mcp.Required())}
	getOpts := []mcp.ToolOption{mcp.WithString("order_id", mcp.Required())}
	if annotate {
		setOpts = append(setOpts, mcp.WithIdempotentHintAnnotation(true))
		getOpts = append(getOpts, mcp.WithReadOnlyHintAnnotation(true))
	}
	srv.AddTool(mcp.NewTool("set_status", setOpts...), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s := *st
		s.mu.Lock()
		defer s.mu.Unlock()
		s.m[req.GetString("order_id", "")] = req.GetString("status", "")
		return mcp.NewToolResultText("ok"), nil
	})
	srv.AddTool(mcp.NewTool("get_status", getOpts...), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s := *st
		s.mu.Lock()
		defer s.mu.Unlock()
		return mcp.NewToolResultText(s.m[req.GetString("order_id", "")]), nil
	})
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
	return c
}

// shipper reads the order and sets it shipped, retrying once on an error.
func shipper(c *client.Client) func(context.Context) error {
	return func(ctx context.Context) error {
		call := func(tool string, args map[string]any) error {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = tool, args
			var err error
			for range 2 {
				if _, err = c.CallTool(ctx, req); err == nil || errors.Is(err, context.Canceled) {
					return err
				}
			}
			return err
		}
		if err := call("get_status", map[string]any{"order_id": "o-1"}); err != nil {
			return err
		}
		return call("set_status", map[string]any{"order_id": "o-1", "status": "shipped"})
	}
}

func TestAnnotationsAreRead(t *testing.T) {
	var st *statuses
	setup := testkit.Setup(func(context.Context) error { st = &statuses{m: map[string]string{}}; return nil })
	listed := agentidemmcp.Tools{"set_status": agentidemmcp.Write(agentidemmcp.Identity("order_id"))}

	// Without annotations the retried set_status counts twice.
	rep := testkit.Run(t, shipper(annotatedClient(t, &st, false, listed)), setup, testkit.NoSummary())
	if rep.Safe {
		t.Fatal("without annotations or a declaration, a repeated set_status is a duplicate by count")
	}
	// mcp-go's WithIdempotentHintAnnotation makes the listed write
	// idempotent: its repeats are absorbed.
	rep = testkit.Run(t, shipper(annotatedClient(t, &st, true, listed)), setup, testkit.NoSummary())
	if !rep.Safe {
		t.Fatalf("idempotentHint: %v", rep.Findings)
	}
	// With no Tools at all, the annotations alone trace both tools.
	rep = testkit.TestAgent(t, shipper(annotatedClient(t, &st, true, nil)), setup, testkit.NoSummary())
	kinds := map[string]runtime.Kind{}
	absorbed := 0
	for _, r := range rep.Results {
		for _, o := range r.Trace.Ops {
			kinds[o.Name] = o.Kind
			if o.Repeat == runtime.RepeatAbsorbed && o.JudgedBy == runtime.JudgedByDeclaration {
				absorbed++
			}
		}
	}
	if kinds["get_status"] != runtime.KindRead || kinds["set_status"] != runtime.KindWrite || absorbed == 0 {
		t.Fatalf("annotations alone: kinds %v, %d absorbed repeats", kinds, absorbed)
	}
}

// An order is paid, then shipped, through set_status (idempotentHint). A
// redelivery sets it paid again after it was shipped, then shipped again:
// the repeat set back what its first execution left, and the run ends as
// one delivery leaves it. State sees the status change on the repeat, but
// that is no sign that set_status is not idempotent: a set, not a second
// effect. A redelivery that stops after "paid" (the shipping tool refuses
// a second shipment) leaves the order paid where one delivery shipped it:
// a duplicate.
func TestRepeatedSetAfterALaterSetIsJudgedByTheEnd(t *testing.T) {
	var st *statuses
	var shippedOnce atomic.Bool // the shipper's own books, not in the snapshot
	setup := testkit.Setup(func(context.Context) error {
		st = &statuses{m: map[string]string{}}
		shippedOnce.Store(false)
		return nil
	})
	state := testkit.State(func() any {
		st.mu.Lock()
		defer st.mu.Unlock()
		return maps.Clone(st.m)
	})
	c := annotatedClient(t, &st, true, agentidemmcp.Tools{"set_status": agentidemmcp.Write(agentidemmcp.Identity("order_id"))})
	agent := func(shipOnce bool) func(context.Context) error {
		return func(ctx context.Context) error {
			set := func(status string) error {
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = "set_status", map[string]any{"order_id": "o-1", "status": status}
				_, err := c.CallTool(ctx, req)
				return err
			}
			if err := set("paid"); err != nil {
				return err
			}
			if shipOnce && shippedOnce.Load() {
				return nil
			}
			if err := set("shipped"); err != nil {
				return err
			}
			if shipOnce {
				shippedOnce.Store(true)
			}
			return nil
		}
	}
	rep := testkit.Run(t, agent(false), setup, state, testkit.NoSummary())
	if !rep.Safe {
		t.Fatalf("paid, shipped, delivered twice: %v", rep.Findings)
	}
	redone := 0
	for _, r := range rep.Results {
		for _, o := range r.Trace.Ops {
			if o.Repeat == runtime.RepeatAbsorbed && o.JudgedBy == runtime.JudgedByEndState && o.StateChange != "" {
				redone++
			}
		}
	}
	if redone == 0 {
		t.Fatal("no repeat of set_status set back a later status")
	}
	rep = testkit.Run(t, agent(true), setup, state, testkit.NoSummary())
	var codes []string
	for _, f := range rep.Problems {
		codes = append(codes, f.Code)
	}
	if !slices.Equal(codes, []string{runtime.CodeDuplicateWrite}) {
		t.Fatalf("a redelivery that leaves the order paid: problems %v, want one duplicate_write", codes)
	}
}
