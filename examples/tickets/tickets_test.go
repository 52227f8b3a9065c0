package tickets

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const dispute = "D-1001"

type world struct{ desk *Helpdesk }

func (w *world) options() []testkit.Option {
	return []testkit.Option{
		testkit.Setup(func(context.Context) error { w.desk = NewHelpdesk(); return nil }),
		// At most one: "at least one where the agent said done" is
		// ExactlyOnce's job, since only the suite knows what the agent said.
		testkit.Invariant("at most one ticket for the dispute on the disputes queue", func(*runtime.Trace) error {
			if n := w.desk.Count(dispute, Queue); n > 1 {
				return fmt.Errorf("%d tickets for %s on %s", n, dispute, Queue)
			}
			return nil
		}),
	}
}

// findings maps each scenario with an error finding to its codes.
func findings(rep *runtime.Report) map[string][]string {
	out := map[string][]string{}
	for _, f := range rep.Findings {
		if f.Severity == runtime.SeverityError {
			out[f.Scenario] = append(out[f.Scenario], f.Code)
		}
	}
	return out
}

func TestAgentOpensExactlyOneTicket(t *testing.T) {
	w := &world{}
	rep := checked(t, testkit.TestAgent(t, func(ctx context.Context) error {
		_, err := (&Agent{Desk: w.desk}).Run(ctx, dispute)
		return err
	}, append(w.options(), testkit.ExactlyOnce())...))
	assert.True(t, rep.Safe)
}

func TestFreshKeyAgentIsCaught(t *testing.T) {
	w := &world{}
	rep := checked(t, testkit.Run(t, func(ctx context.Context) error {
		_, err := (&FreshKeyAgent{Desk: w.desk}).Run(ctx, dispute)
		return err
	}, w.options()...))
	got := findings(rep)
	// The retry after a lost acknowledgement comes with a new key: the
	// helpdesk opens a second ticket.
	assert.ElementsMatch(t, []string{runtime.CodeIdentityUnstable, runtime.CodeInvariantFailed}, got["lost_acknowledgement/createTicket#1"])
	// A failure before the create is retried under a new key too: only one
	// ticket opens, but the key changed, which is the bug.
	assert.Equal(t, []string{runtime.CodeIdentityUnstable}, got["before_operation_failure/createTicket#1"])
	// Redelivery opens another ticket under another key.
	assert.Contains(t, got["duplicate_delivery/sequential"], runtime.CodeInvariantFailed)
	assert.Contains(t, got["crash_restart/createTicket#1"], runtime.CodeInvariantFailed)
}

func TestCheckThenCreateAgentIsCaughtByConcurrentDelivery(t *testing.T) {
	w := &world{}
	rep := checked(t, testkit.Run(t, func(ctx context.Context) error {
		_, err := (&CheckThenCreateAgent{Desk: w.desk}).Run(ctx, dispute)
		return err
	}, w.options()...))
	got := findings(rep)
	// One delivery at a time, the check works; two at once both see no
	// ticket and both create one.
	assert.Equal(t, map[string][]string{
		"duplicate_delivery/concurrent": {runtime.CodeDuplicateWrite, runtime.CodeInvariantFailed},
	}, got)
	for _, f := range rep.Findings {
		if f.Code == runtime.CodeDuplicateWrite {
			require.Equal(t, []string{"createTicketUnkeyed"}, f.Ops)
			assert.Equal(t, []string{`["D-1001","disputes"]`}, f.Identities)
		}
	}
}

// checked validates a report against the JSON Schema before the test looks
// at it: every report an example produces must match runtime/report.schema.json.
func checked(t *testing.T, rep *runtime.Report) *runtime.Report {
	t.Helper()
	require.NoError(t, reportschema.Validate(rep))
	return rep
}
