package mcpgo_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/adapters/mcp/mcpgo"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// notesClient serves add_note, which appends a note, with an
// idempotentHint that lies about it, and returns an in-process client.
func notesClient(t *testing.T, notes *[]string, mu *sync.Mutex) *client.Client {
	t.Helper()
	srv := server.NewMCPServer("crm", "1.0.0", server.WithToolHandlerMiddleware(mcpgo.Middleware(nil)))
	srv.AddTool(mcp.NewTool("add_note", mcp.WithString("email", mcp.Required()), mcp.WithString("text", mcp.Required()),
		mcp.WithIdempotentHintAnnotation(true)), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		*notes = append(*notes, req.GetString("email", "")+": "+req.GetString("text", ""))
		return mcp.NewToolResultText("noted"), nil
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

// TestALyingIdempotentHintWithoutStateIsNoted is red team rtL's
// TestNotesLyingHintNoState: add_note appends, its server says
// idempotentHint, and the agent retries it once on an error. Without
// State the hint is trusted, as the README says, and the suite is SAFE;
// it used to say nothing more than "1 repeat absorbed (declared
// idempotent)". The report's notes, and the summary under the verdict,
// now say the declaration went unchecked and that State checks it. With
// State the lie is not_idempotent, as before.
func TestALyingIdempotentHintWithoutStateIsNoted(t *testing.T) {
	var (
		mu    sync.Mutex
		notes []string
	)
	c := notesClient(t, &notes, &mu)
	agent := func(ctx context.Context) error {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "add_note", map[string]any{"email": "a@x.io", "text": "welcome"}
		var err error
		for range 2 {
			if _, err = c.CallTool(ctx, req); err == nil || errors.Is(err, context.Canceled) {
				return err
			}
		}
		return err
	}
	setup := testkit.Setup(func(context.Context) error { mu.Lock(); notes = nil; mu.Unlock(); return nil })

	rep := testkit.Run(t, agent, setup, testkit.NoSummary())
	if !rep.Safe {
		t.Fatalf("without State the idempotentHint is trusted (the README's trust): %v", rep.Findings)
	}
	i := slices.IndexFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, "declared idempotent, not checked: ") })
	if i < 0 || !strings.Contains(rep.Notes[i], "(add_note ") || !strings.Contains(rep.Notes[i], "idempotentHint") || !strings.Contains(rep.Notes[i], "testkit.State") {
		t.Fatalf("no note that add_note's idempotentHint went unchecked: %q", rep.Notes)
	}
	if sum := testkit.Summary(rep); !strings.Contains(sum, "\n  note: declared idempotent, not checked: ") {
		t.Fatalf("the summary does not print the note:\n%s", sum)
	}

	state := testkit.State(func() any { mu.Lock(); defer mu.Unlock(); return slices.Clone(notes) })
	rep = testkit.Run(t, agent, setup, state, testkit.NoSummary())
	if rep.Safe || !slices.ContainsFunc(rep.Findings, func(f runtime.Finding) bool { return f.Code == runtime.CodeNotIdempotent }) {
		t.Fatalf("with State the lying hint must be not_idempotent: safe=%v %v", rep.Safe, rep.Findings)
	}
	if slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, "declared idempotent, not checked: ") }) {
		t.Fatalf("with State, a note that State would check it: %q", rep.Notes)
	}
}
