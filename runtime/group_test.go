package runtime

import (
	"slices"
	"testing"
)

// context_detached findings name no op. A tool given a context that is not
// the agent's (a warning, reported once per suite) and a call refused
// because no run could claim it (an error, in every scenario it happens in)
// are two problems: before, they shared a key, and testkit printed a
// scenario's refusal as "as in baseline (printed there)" when the baseline
// had only the warning. One op's refusal seen in two scenarios is one
// problem, whatever scenario left the goroutine that made it.
func TestContextDetachedProblemsAreApart(t *testing.T) {
	warning := Finding{Code: CodeContextDetached, Severity: SeverityWarning, Scenario: ScenarioBaseline,
		Message: "a tool was called at agent.go:12 with a context that does not come from the agent's"}
	refusal := Finding{Code: CodeContextDetached, Severity: SeverityError, Scenario: "lost_acknowledgement/put#1", Ops: []string{"put"},
		Message: "call of put refused: ..., started by an invocation of scenario baseline of TestPut, ..."}
	// The same call refused in another scenario names another origin, or
	// another count of active runs: it is the same problem.
	again := refusal
	again.Scenario = "crash_restart/put#1"
	again.Message = "call of put refused: ..., started by an invocation of scenario lost_acknowledgement/put#1 of TestPut, ..."
	unsure := Finding{Code: CodeContextDetached, Severity: SeverityWarning, Scenario: "crash_restart/put#1", Ops: []string{"put"},
		Message: "a call of put was made during this run by a goroutine another agent's run started ..."}
	if warning.GroupKey() == refusal.GroupKey() {
		t.Errorf("the warning and the refusal are one problem: %q", warning.GroupKey())
	}
	if refusal.GroupKey() != again.GroupKey() {
		t.Errorf("one refusal in two scenarios is two problems")
	}
	if unsure.GroupKey() == refusal.GroupKey() || unsure.GroupKey() == warning.GroupKey() {
		t.Errorf("an unattributed call is one problem with a refusal or a detached context")
	}
	if got := len(GroupFindings([]Finding{warning, refusal, again, unsure})); got != 3 {
		t.Errorf("%d problems, want 3", got)
	}
}

// A scenario that shows one problem in two findings is listed once in the
// problem's SeenIn, and every other scenario that shows it still is: in
// rtk/late (red team rtK) the goroutine a scenario left behind called
// notify after its run (reportLate) while one an earlier scenario left
// called notify during it (amidLate), two goroutine_leak findings on
// notify in one scenario, and the summary's problem line named each such
// scenario twice.
func TestAProblemListsEachScenarioOnce(t *testing.T) {
	leak := func(scenario, msg string) Finding {
		return Finding{Code: CodeGoroutineLeak, Severity: SeverityWarning, Ops: []string{"notify"},
			Scenario: scenario, Replay: "go test -run " + scenario, Message: msg}
	}
	amid := "a call of notify was made during this run by a goroutine that scenario lost_acknowledgement/notify#1 left running"
	after := "a tool call (notify) came after the scenario's run had ended"
	fs := []Finding{
		leak("lost_acknowledgement/notify#1", after),
		leak("lost_request/notify#1", amid), leak("lost_request/notify#1", after),
		leak("before_operation_failure/notify#1", amid), leak("before_operation_failure/notify#1", after),
	}
	got := GroupFindings(fs)
	if len(got) != 1 {
		t.Fatalf("%d problems, want 1", len(got))
	}
	var seen []string
	for _, o := range got[0].SeenIn {
		seen = append(seen, o.Scenario)
	}
	want := []string{"lost_acknowledgement/notify#1", "lost_request/notify#1", "before_operation_failure/notify#1"}
	if !slices.Equal(seen, want) {
		t.Errorf("seen in %q, want %q", seen, want)
	}
	if got[0].Message != after || got[0].SeenIn[1].Replay != "go test -run lost_request/notify#1" {
		t.Errorf("the problem is not the first finding's, with each scenario's replay: %+v", got[0])
	}
}
