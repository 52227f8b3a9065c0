package testkit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A serial agent's two concurrent deliveries get the same call ids on
// every run: the lockstep numbers the calls it lets go together by their
// place in their delivery, then by delivery, not in the order their
// goroutines reached the gate. Numbered as they arrived, the first posts
// were 1:post#1 and 2:post#2 on one run and 2:post#1 and 1:post#2 on the
// next, and so were the ids the duplicate_write message lists.
func TestConcurrentDeliveryIdsAreTheSameEveryRun(t *testing.T) {
	agent, setup := measureAgents()[2].agent() // ten writes
	seen := map[string]int{}
	for range 30 {
		rep, err := runtime.Run(context.Background(), "ids", agent, setup, runtime.OnlyScenario(runtime.ScenarioDuplicateConcurrent))
		require.NoError(t, err)
		require.Len(t, rep.Results, 1)
		res := rep.Results[0]
		var line []string
		for _, o := range res.Trace.Ops {
			line = append(line, o.ID)
		}
		for _, f := range res.Findings {
			line = append(line, f.Code+": "+f.Message)
		}
		seen[strings.Join(line, "\n")]++
	}
	assert.Len(t, seen, 1, "%v", seen)
}
