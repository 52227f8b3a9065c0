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

// The integration test of armsAfterFunc is testkit's
// TestADependentCallAnAfterFuncMakesIsInFlightWithTheOneBefore. A timer
// written out as longer than parkedGrace (a deadline) is no pacing; one
// whose duration is a variable, or short, is.
func TestArmsShortAfterFunc(t *testing.T) {
	for src, want := range map[string]bool{
		"time.AfterFunc(time.Millisecond, func() { attach() })":                    true,
		"t := time.AfterFunc(2*time.Millisecond, next)":                            true,
		"clk.AfterFunc(d, func() {":                                                true,
		"stop := time.AfterFunc(30*time.Second, cancel)":                           false,
		"time.AfterFunc(time.Minute, func() {})":                                   false,
		"time.AfterFunc(time.Second, cancel)\ntime.AfterFunc(time.Millisecond, f)": true,
		"timer := time.NewTimer(d)":                                                false,
		"wg.Wait()":                                                                false,
	} {
		assert.Equal(t, want, armsShortAfterFunc(src), "%q", src)
	}
	for state, want := range map[string]bool{
		"sync.WaitGroup.Wait": true, "chan receive": true, "select (durable)": true, "semacquire": true,
		"sync.Mutex.Lock": true, "running": false, "IO wait": false, "sleep": false, "runnable": false,
	} {
		assert.Equal(t, want, blockedOnSync(state), state)
	}
}
