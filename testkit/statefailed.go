package testkit

import (
	"fmt"
	"strings"

	"github.com/agentidem/agentidem-go/runtime"
)

// A State that works in the baseline and fails in a scenario's world (it
// panics, or returns what JSON cannot encode) leaves the runtime unable
// to judge that scenario's repeats by the world: they are unjudged and
// the scenario inconclusive, so that a correct agent whose sink absorbs
// repeats is never counted UNSAFE for its State's failure. But an
// inconclusive scenario passes go test, and the world a State most often
// fails in is the one a bug makes (two tickets for one order, where
// State's index panics on a duplicate): the buggy agent's duplicate_write
// became a green go test, where the same agent with no State at all
// failed (red team rtV #1). Giving State must never make the verdict
// weaker than giving none. So under TestAgent a State failure in any
// scenario fails the test, as one in the baseline does (a configuration
// error), naming the scenarios, the calls and State's own error: the
// finding is about State, which is true, not a duplicate the suite did not
// see. A Settle that did not see the world go quiet is not a State
// failure (a worker slower than its bound) and stays inconclusive.

// settleFailed starts the StateError of a Settle that did not see the world
// quiet (runtime's settleTimeout).
const settleFailed = "the world did not go quiet"

// endUnread starts runtime's note of a run whose end State could not read.
const endUnread = "the end of this run could not be read ("

// stateFailures lists where State itself failed after the baseline, one
// entry per distinct error: "error, in scenario (around call), ...".
func stateFailures(rep *runtime.Report) []string {
	var order []string
	where := map[string][]string{}
	add := func(err, at string) {
		if err == "" || strings.HasPrefix(err, settleFailed) {
			return
		}
		if _, ok := where[err]; !ok {
			order = append(order, err)
		}
		if l := where[err]; len(l) == 0 || l[len(l)-1] != at {
			where[err] = append(l, at)
		}
	}
	for _, res := range rep.Results {
		if res == nil || res.Trace == nil {
			continue
		}
		for _, o := range res.Trace.Ops {
			add(o.StateError, res.Scenario)
		}
		for _, n := range res.Trace.Notes {
			if rest, ok := strings.CutPrefix(n, endUnread); ok && strings.HasPrefix(rest, "State") {
				if i := strings.Index(rest, "): a repeated write"); i >= 0 {
					add(rest[:i], res.Scenario)
				}
			}
		}
	}
	out := make([]string, len(order))
	for i, err := range order {
		out[i] = fmt.Sprintf("%s, in %s", err, strings.Join(where[err], ", "))
	}
	return out
}

// stateFailedError is the error of a suite whose State failed after the
// baseline, as stateFailures lists it.
func stateFailedError(failed []string) error {
	return fmt.Errorf("State worked in the baseline but failed later: %s; the repeated writes there could not be judged by the world, and those scenarios are inconclusive, but a State that fails must not pass a test that fails without State (a repeat of a write not declared idempotent counts then): make State read every state the world can be in, above all the one a bug makes (two rows where one is expected), returning what it sees rather than panicking on it",
		strings.Join(failed, "; "))
}
