// Package waitclock is a helper package of the module's own, for the
// runtime package's tests of the stall watch: a team's small clock helper
// whose timer the caller's code does not show (red team rtW #5).
package waitclock

import "time"

// Wait returns a channel closed once d has passed.
func Wait(d time.Duration) <-chan struct{} {
	ch := make(chan struct{})
	time.AfterFunc(d, func() { close(ch) })
	return ch
}

// Hook returns the channel it is given, which only its owner closes: no
// timer.
func Hook(stop <-chan struct{}) <-chan struct{} {
	return stop
}
