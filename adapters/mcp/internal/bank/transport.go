package bank

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// Agents builds, for one MCP SDK and transport, the agent that runs run
// over a client of the bank server (invoices false) or of the invoice
// server (invoices true): a client per invocation (shared false) or one
// client Setup connects once (shared true). It returns the agent and its
// options: the Setup that gives each scenario a fresh world, and the
// world's invariant.
type Agents func(t *testing.T, invoices, shared bool, run func(context.Context, Caller) error) (func(context.Context) error, []testkit.Option)

// TransportCases runs the bank and invoice agents through agents, with a
// client per invocation and with a shared one: the naive refunds are
// caught (duplicate_write in each lost acknowledgement), the keyed refunds
// pass, the dependent pair sent in one turn is caught
// (dependent_calls_concurrent in an interleaving), the pair sent in order
// passes, and no scenario stalls. checked validates each report.
func TransportCases(t *testing.T, agents Agents, checked func(*testing.T, *runtime.Report) *runtime.Report) {
	for _, shared := range []bool{false, true} {
		session := "client per invocation"
		if shared {
			session = "shared client"
		}
		suite := func(t *testing.T, invoices bool, run func(context.Context, Caller) error) *runtime.Report {
			t.Helper()
			agent, opts := agents(t, invoices, shared, run)
			rep := checked(t, testkit.Run(t, agent, append(opts, testkit.NoSummary())...))
			for _, p := range rep.Problems {
				if p.Code == runtime.CodeStalled {
					t.Errorf("%s stalled: %s", p.Scenario, p.Message)
				}
			}
			return rep
		}
		t.Run(session+"/naive refunds are caught", func(t *testing.T) {
			rep := suite(t, false, func(ctx context.Context, call Caller) error { return Client{Call: call}.Run(ctx) })
			if !rep.BaselineSucceeded {
				t.Fatalf("baseline failed: %s", rep.BaselineFailure)
			}
			for k := 1; k <= 3; k++ {
				if sc := fmt.Sprintf("lost_acknowledgement/refund#%d", k); !Has(rep, sc, runtime.CodeDuplicateWrite) {
					t.Errorf("no duplicate_write in %s; findings: %v", sc, Codes(rep))
				}
			}
		})
		t.Run(session+"/keyed refunds pass", func(t *testing.T) {
			rep := suite(t, false, func(ctx context.Context, call Caller) error { return Client{Keyed: true, Call: call}.Run(ctx) })
			if !rep.Safe || rep.InconclusiveCount != 0 {
				t.Errorf("keyed client: safe %v, %d inconclusive; findings: %v", rep.Safe, rep.InconclusiveCount, Codes(rep))
			}
		})
		t.Run(session+"/dependent pair in one turn is caught", func(t *testing.T) {
			rep := suite(t, true, func(ctx context.Context, call Caller) error {
				return InvoiceClient{OneTurn: true, Call: call}.Run(ctx)
			})
			found := false
			for _, f := range rep.Findings {
				if f.Code == runtime.CodeDependentCallsConcurrent && strings.HasPrefix(f.Scenario, runtime.ScenarioInterleaving+"/") {
					found = true
				}
			}
			if !found {
				t.Errorf("no dependent_calls_concurrent in an interleaving; findings: %v", Codes(rep))
			}
		})
		t.Run(session+"/dependent pair in order passes", func(t *testing.T) {
			rep := suite(t, true, func(ctx context.Context, call Caller) error { return InvoiceClient{Call: call}.Run(ctx) })
			if !rep.Safe || rep.InconclusiveCount != 0 {
				t.Errorf("in-order client: safe %v, %d inconclusive; findings: %v", rep.Safe, rep.InconclusiveCount, Codes(rep))
			}
		})
	}
}
