package render

import (
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// A stalled scenario's line says how its agent ended: "agent returned an
// error" of an agent blocked for good, whose stall finding said it did not
// return, was untrue (red team rtV #15).
func TestAStalledScenarioSaysTheAgentDidNotReturn(t *testing.T) {
	stalled := func(msg string) *runtime.Result {
		return &runtime.Result{Failed: true, Error: "stalled", Trace: &runtime.Trace{},
			Findings: []runtime.Finding{{Code: runtime.CodeStalled, Severity: runtime.SeverityError, Message: msg}}}
	}
	for _, c := range []struct {
		res  *runtime.Result
		want string
	}{
		{stalled("scenario stalled: ...; the agent did not return after its context was cancelled, and its goroutines were left running: ..."), "stalled, agent did not return"},
		{stalled("scenario stalled: no progress for 10s: ..."), "stalled, agent returned once cancelled"},
		{&runtime.Result{Failed: true, Error: "delivery 1: boom", Trace: &runtime.Trace{}}, "agent returned an error"},
	} {
		if got := scenarioFacts(c.res); !strings.Contains(got, c.want) {
			t.Errorf("scenarioFacts = %q, want %q in it", got, c.want)
		}
		if got := scenarioFacts(c.res); c.want != "agent returned an error" && strings.Contains(got, "agent returned an error") {
			t.Errorf("scenarioFacts = %q says the agent returned an error", got)
		}
	}
}
