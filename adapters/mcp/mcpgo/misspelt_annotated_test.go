package mcpgo_test

import (
	"context"
	"strings"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/testkit"
)

// TestMisspeltKeyOfAnAnnotatedToolFailsTheSuite: a Tools key "setStatus"
// for the server's set_status, which its idempotentHint traces anyway,
// was not refused as a misspelt key of an untraced tool is: the call went
// traced by its annotations alone (its whole arguments as its identity),
// without the key's Spec, and the suite passed with no word of the key.
// It is now refused while the suite runs, naming the key and the tool;
// with the key spelt right the suite passes, and production is untouched.
func TestMisspeltKeyOfAnAnnotatedToolFailsTheSuite(t *testing.T) {
	var st *statuses
	setup := testkit.Setup(func(context.Context) error { st = &statuses{m: map[string]string{}}; return nil })
	misspelt := agentidemmcp.Tools{"setStatus": agentidemmcp.Write(agentidemmcp.Identity("order_id"))}
	c := annotatedClient(t, &st, true, misspelt)
	rep := testkit.Run(t, shipper(c), setup, testkit.NoSummary())
	const want = `Tools key "setStatus" names no tool of this server (did you mean "set_status"?): call of set_status refused in a test, where its annotations alone would trace it`
	if rep.Safe || !strings.Contains(rep.BaselineFailure, want) {
		t.Fatalf("safe %v, baseline failure %q; want the suite failed with %s", rep.Safe, rep.BaselineFailure, want)
	}
	st = &statuses{m: map[string]string{}}
	if err := shipper(c)(context.Background()); err != nil {
		t.Errorf("no run active: the call must go through, got %v", err)
	}

	fixed := agentidemmcp.Tools{"set_status": agentidemmcp.Write(agentidemmcp.Identity("order_id"))}
	rep = testkit.Run(t, shipper(annotatedClient(t, &st, true, fixed)), setup, testkit.NoSummary())
	if !rep.Safe {
		t.Fatalf("the key spelt right: safe %v, baseline failure %q, findings %v", rep.Safe, rep.BaselineFailure, rep.Findings)
	}
}
