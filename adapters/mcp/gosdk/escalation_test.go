package gosdk_test

import (
	"context"
	"strings"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An agent whose ticket call got no answer opens an escalation ticket for
// on-call (another ref, the same subject) instead of retrying: other work.
// Through an adapter every call of a tool has the adapter's line for its
// call site, so the site that tells a fresh-key retry from other work tells
// nothing here, and the call was an identity_unstable error naming the
// adapter's line. It is a warning now, saying the suite cannot tell.
func TestOtherWorkAfterAFailureThroughTheAdapterIsNoErrorOfIdentity(t *testing.T) {
	type openIn struct {
		Ref     string `json:"ref"`
		Subject string `json:"subject"`
	}
	var d *ticketDesk
	s := mcp.NewServer(&mcp.Implementation{Name: "desk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "open_ticket"}, func(ctx context.Context, _ *mcp.CallToolRequest, in openIn) (*mcp.CallToolResult, any, error) {
		d.open(in.Ref, in.Ref) // create if absent
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "opened"}}}, nil, nil
	})
	s.AddReceivingMiddleware(gosdk.Middleware(agentidemmcp.Tools{"open_ticket": agentidemmcp.Write(agentidemmcp.Identity("ref"))}))
	agent := perInvocation(s, func(ctx context.Context, cs *mcp.ClientSession) error {
		open := func(ref string) error {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_ticket", Arguments: map[string]any{"ref": ref, "subject": "cannot log in"}})
			return err
		}
		if err := open("ORD-9"); err != nil {
			return open("ESC-ORD-9")
		}
		return nil
	})
	rep := testkit.Run(t, agent, testkit.NoSummary(),
		testkit.Setup(func(context.Context) error { d = &ticketDesk{requests: map[string]bool{}}; return nil }),
		testkit.State(func() any { return d.snapshot() }))
	warned := false
	for _, f := range rep.Findings {
		if f.Code != runtime.CodeIdentityUnstable {
			continue
		}
		if f.Severity == runtime.SeverityError {
			t.Errorf("%s: an identity_unstable error for other work: %s", f.Scenario, f.Message)
		}
		if strings.Contains(f.Message, "gosdk.go") {
			t.Errorf("the message names the adapter's line: %s", f.Message)
		}
		warned = true
	}
	if !warned {
		t.Error("no identity_unstable warning: the suite cannot tell, and says so")
	}
}
