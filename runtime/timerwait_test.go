package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The integration test of waitsOnTimer is testkit's
// TestADispatchPacedByATimerChannelIsInFlightWithTheOneBefore: an agent's
// code in this package is the harness's to gInfo.parked.
func TestReceivesFromTimer(t *testing.T) {
	for src, want := range map[string]bool{
		"<-tk.C":                                        true,
		"	case <-t.timer.C:":                            true,
		"<-time.After(2 * time.Millisecond)":            true,
		"case <-time.Tick(d):":                          true,
		"case <-clock.After(d):":                        true,
		"<-ctx.Done()":                                  false,
		"r := <-results":                                false,
		"case v, ok := <-s.Chan:":                       false,
		"select {\ncase <-ctx.Done():\ncase <-tk.C:\n}": true,
		"ch <- x":                                       false,
	} {
		assert.Equal(t, want, receivesFromTimer(src), "%q", src)
	}
}
