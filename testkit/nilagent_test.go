package testkit_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
)

// TestNilAgentChild is run by TestANilAgentFailsTheTest in a child
// process: TestAgent, or Run, given a nil agent func on a *testing.T.
func TestNilAgentChild(t *testing.T) {
	switch os.Getenv("AGENTIDEM_NIL_AGENT_CHILD") {
	case "TestAgent":
		testkit.TestAgent(t, nil)
	case "Run":
		testkit.Run(t, nil)
	default:
		t.Skip("run by TestANilAgentFailsTheTest")
	}
	t.Log("went on after a nil agent func")
}

// A nil agent func fails the test at once, under TestAgent and Run alike,
// with one line that says so. Before, it panicked, and that line sat
// above a goroutine trace (red team rtO, item 6).
func TestANilAgentFailsTheTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	for _, entry := range []string{"TestAgent", "Run"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNilAgentChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "AGENTIDEM_NIL_AGENT_CHILD="+entry)
		b, err := cmd.CombinedOutput()
		out := string(b)
		assert.Error(t, err, "%s: a nil agent func must fail the test\n%s", entry, out)
		assert.Contains(t, out, "--- FAIL: TestNilAgentChild", entry)
		assert.Contains(t, out, "testkit: "+entry+" got a nil agent func: give it the function that runs the agent once, func(ctx context.Context) error", entry)
		assert.NotContains(t, out, "panic", entry)
		assert.NotContains(t, out, "goroutine ", entry)
		assert.NotContains(t, out, "went on after", "%s: t.FailNow ends the test", entry)
	}

	// A TB without FailNow gets the error and a report that is not safe.
	for _, run := range []func(testkit.TB) bool{
		func(ft testkit.TB) bool { return testkit.TestAgent(ft, nil).Safe },
		func(ft testkit.TB) bool { return testkit.Run(ft, nil).Safe },
	} {
		ft := &fakeT{name: "TestNil"}
		assert.False(t, run(ft))
		assert.Len(t, ft.errors, 1)
		assert.True(t, strings.Contains(strings.Join(ft.errors, "\n"), "got a nil agent func"), ft.errors)
	}
}
