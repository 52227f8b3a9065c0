package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// As TestWorldWorkerChangeInARepeatsWindow's heartbeat cases, with the
// baseline's call made 25 ms after Setup, as a loaded machine delays it:
// the heartbeat beat before it, and the concurrent delivery's calls,
// made at once, start from a state one execution never started from but
// for the heartbeat. Their cluster holds the world's mail; compared whole
// with one execution's window, the correct agent was a duplicate_write.
// Left unjudged, the scenario is inconclusive; the naive agent, which
// mails twice, is still caught there.
func TestRestlessWorldsBeatBeforeTheBaselinesCall(t *testing.T) {
	for _, naive := range []bool{false, true} {
		w := &shopWorld{beat: true, naive: naive}
		setups := 0
		agent := func(ctx context.Context) error {
			if setups == 1 {
				time.Sleep(25 * time.Millisecond) // the baseline's call, late
			}
			return shopAgent(w)(ctx)
		}
		rep, err := Run(context.Background(), t.Name(), agent,
			Setup(func(context.Context) error { setups++; w.start(); return nil }),
			Teardown(func(context.Context) error { w.stop(); return nil }),
			State(w.snapshot))
		require.NoError(t, err)
		if naive {
			assert.Equal(t, []string{"duplicate_write place_order"}, findings(rep, ScenarioDuplicateConcurrent))
			continue
		}
		assert.Empty(t, findings(rep, ""), "the world's mail under a heartbeat")
		for _, r := range rep.Results {
			if r.Scenario == ScenarioDuplicateConcurrent {
				assert.True(t, r.Inconclusive, "unjudged: %q", r.Trace.Notes)
			}
		}
	}
}
