package testkit

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWatchdogEndsAStalledRunLoudly runs itself in a child process whose
// "scheduled run" never finishes: the watchdog must end it with the hazard
// named, not let it hang.
func TestWatchdogEndsAStalledRunLoudly(t *testing.T) {
	if os.Getenv("AGENTIDEM_WATCHDOG_CHILD") == "1" {
		stop := watchdog("TestStalled", 50*time.Millisecond)
		defer stop()
		time.Sleep(10 * time.Second) // the stalled run
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchdogEndsAStalledRunLoudly$")
	cmd.Env = append(os.Environ(), "AGENTIDEM_WATCHDOG_CHILD=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the child must not pass")
	assert.Less(t, time.Since(start), 8*time.Second, "ended by the watchdog, not by the sleep")
	assert.Contains(t, string(out), "agentidem: TestStalled: a scheduled run made no progress for 50ms")
	assert.Contains(t, string(out), "sync.Mutex held across a tool call")

	// A run that finishes stops its watchdog.
	stop := watchdog("TestFine", 20*time.Millisecond)
	stop()
	time.Sleep(40 * time.Millisecond)
}

// The watchdog's bound follows the suite's stall bound: three times it,
// at least 30 s (it was two minutes whatever StallTimeout said).
func TestWatchdogBoundFollowsTheStallBound(t *testing.T) {
	for _, c := range []struct{ stall, want time.Duration }{
		{5 * time.Second, 30 * time.Second},
		{10 * time.Second, 30 * time.Second},
		{time.Minute, 3 * time.Minute},
	} {
		if got := watchdogBound(c.stall); got != c.want {
			t.Errorf("watchdogBound(%v) = %v, want %v", c.stall, got, c.want)
		}
	}
}
