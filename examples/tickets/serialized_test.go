package tickets

import (
	"context"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
)

// The check-then-create agent serialized by a channel semaphore passes
// every scenario, and the concurrent delivery, whose second delivery waits
// on the semaphore outside any gate, ends instead of hanging.
func TestSerializedAgentPassesWithoutHang(t *testing.T) {
	w := &world{}
	sem := make(chan struct{}, 1) // one per worker process, made before any scenario
	rep := testkit.TestAgent(t, func(ctx context.Context) error {
		_, err := (&SerializedAgent{Desk: w.desk, Sem: sem}).Run(ctx, dispute)
		return err
	}, w.options()...)
	assert.True(t, rep.Safe)
	for _, r := range rep.Results {
		if r.Scenario == runtime.ScenarioDuplicateConcurrent {
			assert.Contains(t, strings.Join(r.Trace.Notes, "\n"), "went on alone", "the lockstep saw the semaphore")
		}
	}
}
