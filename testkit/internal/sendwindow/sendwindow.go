// Package sendwindow is a helper package of the module's own, for
// testkit's tests of the stall watch: a provider's send window whose
// timer is armed when a Setup builds it, and whose channel the agent
// waits on carries no timer word (red team rtX #3).
package sendwindow

import "time"

// Window opens once a cool-down has passed.
type Window struct{ open chan struct{} }

// New returns a Window that opens after coolDown.
func New(coolDown time.Duration) *Window {
	w := &Window{open: make(chan struct{})}
	time.AfterFunc(coolDown, func() { close(w.open) })
	return w
}

// Ready returns a channel closed once the window opens.
func (w *Window) Ready() <-chan struct{} {
	return w.open
}

// Shut returns a Window that opens only when the test calls Release: a
// provider that never opens it while the suite runs.
func Shut() *Window {
	w := &Window{open: make(chan struct{})}
	shut = append(shut, w)
	return w
}

var shut []*Window

// Release opens the windows Shut returned, so that an agent left waiting
// on one returns.
func Release() {
	for _, w := range shut {
		close(w.open)
	}
	shut = nil
}
