// Package bubble tells whether the calling goroutine runs in a
// testing/synctest bubble, with package time alone.
package bubble

import "time"

// In reports whether the calling goroutine runs in a testing/synctest
// bubble. Inside one, time.Now carries no monotonic clock reading (the Go
// runtime leaves it out there), and outside one it always does; t.Round(0)
// strips it, so the two are equal only in a bubble. Timers and channels
// made in a bubble belong to it (one reset or read from outside ends the
// test binary), and testing forbids subtests there.
func In() bool {
	now := time.Now()
	return now == now.Round(0)
}
