// Package hookcode carries, from package testkit to package runtime, the
// function a test gave as a Setup, which testkit wraps before the runtime
// sees it: the runtime's stall watch reads that function's code for the
// timers it may have left pending (runtime/scenariocode.go), and the
// wrapper's code is testkit's, not the test's.
package hookcode

import "context"

// Setup is set by package runtime when it is initialised: it returns, as
// a runtime.Option, runtime.Setup(run) whose code, where the stall watch
// reads it, is code's.
var Setup func(run, code func(context.Context) error) any
