package runtime

import "testing"

func TestParkedIsTheAgentsOwnCode(t *testing.T) {
	for f, want := range map[string]bool{
		"main.worker.func1":                                                   true,
		"rt8time.TestStaggeredDependentCalls.func3.2":                         true,
		"github.com/acme/agent.(*Agent).stagger":                              true,
		"github.com/agentidem/agentidem-go/examples/invoices.(*A).Run":        true,
		"github.com/agentidem/agentidem-go/testkit_test.TestX.func1":          true,
		"github.com/agentidem/agentidem-go/runtime.(*scheduler).drive":        false,
		"github.com/agentidem/agentidem-go/testkit.suite.func1":               false,
		"github.com/agentidem/agentidem-go/adapters/mcp.(*session).read":      false,
		"github.com/agentidem/agentidem-go/adapters/eino/examples/shop.agent": true,
		"github.com/agentidem/agentidem-go/idem/sqlite.(*Outbox).run":         false,
		"net/http.(*persistConn).writeLoop":                                   false,
		"context.(*cancelCtx).propagateCancel.func2":                          false,
		"database/sql.(*DB).connectionOpener":                                 false,
		"golang.org/x/sync/errgroup.(*Group).Go.func1":                        false,
		"github.com/modelcontextprotocol/go-sdk/mcp.(*Session).run.func1":     false,
		// A module whose path has no dot (module shop, a monorepo's or a
		// test module's): its nested packages are the agent's too (they
		// were taken for the standard library's: red team, /tmp/rt26 v1).
		"shop/store.(*Store).AddItem":          true,
		"rt26/v1.(*cart).add.func1":            true,
		"encoding/json.(*Decoder).Decode":      false,
		"internal/poll.(*FD).Read":             false,
		"text/template.(*state).walk":          false,
		"vendor/golang.org/x/net/http2.(*x).y": false,
	} {
		g := &gInfo{state: "select", funcs: []string{f}}
		if got := g.parked(); got != want {
			t.Errorf("parked(%s) = %v, want %v", f, got, want)
		}
	}
	if !(&gInfo{state: "chan receive (durable)", funcs: []string{"main.worker"}}).parked() {
		t.Error("a goroutine durably blocked in a bubble does not count as parked")
	}
	if (&gInfo{state: "select (no cases)", funcs: []string{"main.worker"}}).parked() {
		t.Error("select {} counts as parked")
	}
	if (&gInfo{state: "sleep", funcs: []string{"main.worker"}}).parked() {
		t.Error("a sleeping goroutine counts as parked")
	}
}
