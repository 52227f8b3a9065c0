package runtime

import "testing"

// context_detached findings name no op. A tool given a context that is not
// the agent's (a warning, reported once per suite) and a call refused
// because no run could claim it (an error, in every scenario it happens in)
// are two problems: before, they shared a key, and testkit printed a
// scenario's refusal as "as in baseline (printed there)" when the baseline
// had only the warning. One refusal seen in two scenarios is one problem.
func TestContextDetachedProblemsAreApart(t *testing.T) {
	warning := Finding{Code: CodeContextDetached, Severity: SeverityWarning, Scenario: ScenarioBaseline,
		Message: "a tool was called at agent.go:12 with a context that does not come from the agent's"}
	refusal := Finding{Code: CodeContextDetached, Severity: SeverityError, Scenario: "lost_acknowledgement/put#1",
		Message: "call of put refused: it has no context.Context parameter, and ..."}
	again := refusal
	again.Scenario = "crash_restart/put#1"
	if warning.GroupKey() == refusal.GroupKey() {
		t.Errorf("the warning and the refusal are one problem: %q", warning.GroupKey())
	}
	if refusal.GroupKey() != again.GroupKey() {
		t.Errorf("one refusal in two scenarios is two problems")
	}
	if got := len(GroupFindings([]Finding{warning, refusal, again})); got != 2 {
		t.Errorf("%d problems, want 2", got)
	}
}
