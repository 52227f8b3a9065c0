package mcpgo_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/mcpgo"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// add_comment posts a comment on a ticket; the tracker drops one identical
// to a comment the ticket holds, so the tool is honestly idempotent for
// equal arguments, as its idempotentHint (or Idempotent() in Tools) says,
// and is identified by the ticket alone. The buggy agent retries a timed
// out call with the attempt in the text, and its retry posts a second
// comment: with State that was an "update", SAFE 10/10 (red team rtL R5,
// adapters/mcp/rtl/idemargs TestAttemptTextHintState).
func TestARewordedRetryOfAnIdempotentToolIsADuplicate(t *testing.T) {
	byTicket := agentidemmcp.Tools{"add_comment": agentidemmcp.Write(agentidemmcp.Identity("ticket_id"))}
	byTicketIdem := agentidemmcp.Tools{"add_comment": agentidemmcp.Write(agentidemmcp.Identity("ticket_id"), agentidemmcp.Idempotent())}
	for _, tc := range []struct {
		name           string
		tools          agentidemmcp.Tools
		hint, reworded bool
		unsafe         bool
	}{
		{"hint, reworded", byTicket, true, true, true},
		{"Idempotent(), reworded", byTicketIdem, false, true, true},
		{"plain, reworded", byTicket, false, true, true},
		{"hint, same text", byTicket, true, false, false},
		{"Idempotent(), same text", byTicketIdem, false, false, false},
	} {
		var mu sync.Mutex
		var comments []string
		opts := []mcp.ToolOption{mcp.WithString("ticket_id"), mcp.WithString("text")}
		if tc.hint {
			opts = append(opts, mcp.WithIdempotentHintAnnotation(true))
		}
		s := server.NewMCPServer("desk", "1", server.WithToolHandlerMiddleware(mcpgo.Middleware(tc.tools)))
		s.AddTool(mcp.NewTool("add_comment", opts...), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c := req.GetString("ticket_id", "") + ": " + req.GetString("text", "")
			mu.Lock()
			defer mu.Unlock()
			if !slices.Contains(comments, c) {
				comments = append(comments, c)
			}
			return mcp.NewToolResultText("added"), nil
		})
		c, err := client.NewInProcessClient(s)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		if _, err := c.Initialize(context.Background(), init); err != nil {
			t.Fatal(err)
		}
		agent := func(ctx context.Context) error {
			var err error
			for attempt := 1; attempt <= 3; attempt++ {
				text := "refund issued"
				if tc.reworded {
					text = fmt.Sprintf("refund issued (attempt %d)", attempt)
				}
				req := mcp.CallToolRequest{}
				req.Params.Name = "add_comment"
				req.Params.Arguments = map[string]any{"ticket_id": "T-1", "text": text}
				_, err = c.CallTool(ctx, req)
				if err = agentidemmcp.Lost(err); !errors.Is(err, context.DeadlineExceeded) {
					return err
				}
			}
			return err
		}
		rep := checked(t, testkit.Run(t, agent,
			testkit.Setup(func(context.Context) error { mu.Lock(); comments = nil; mu.Unlock(); return nil }),
			testkit.State(func() any { mu.Lock(); defer mu.Unlock(); return slices.Clone(comments) })))
		var dups []string
		for _, f := range rep.Findings {
			if f.Code == runtime.CodeDuplicateWrite {
				dups = append(dups, f.Scenario)
			}
		}
		want := []string(nil)
		if tc.unsafe {
			// The retry after the lost acknowledgement posts the second
			// comment; a redelivery or a restart posts the first text
			// again, which the tracker drops.
			want = []string{runtime.ScenarioLostAck + "/add_comment#1"}
		}
		if !slices.Equal(dups, want) {
			t.Errorf("%s: duplicate_write in %v, want %v", tc.name, dups, want)
		}
		if rep.Safe == tc.unsafe {
			t.Errorf("%s: safe=%v", tc.name, rep.Safe)
		}
	}
}
