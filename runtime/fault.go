package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// ErrInjected is matched (errors.Is) by every error the runtime injects.
var ErrInjected = errors.New("agentidem: injected fault")

// ErrPanicked is matched by the error a wrapper returns after the tool
// panicked; the panic itself is recorded in the trace.
var ErrPanicked = errors.New("agentidem: tool panicked")

// FaultKind names a fault the runtime can inject into one call.
type FaultKind string

const (
	// FaultNone injects nothing.
	FaultNone FaultKind = ""
	// FaultBefore fails the call before the tool runs.
	FaultBefore FaultKind = "before_operation_failure"
	// FaultLostAck runs the tool, then loses its result: the agent sees a
	// timeout.
	FaultLostAck FaultKind = "lost_acknowledgement"
	// FaultLostRequest fails the call before the tool runs, but the agent
	// sees a timeout: from the outside it cannot be told apart from a lost
	// acknowledgement, so an agent that takes a timeout for success drops
	// the work.
	FaultLostRequest FaultKind = "lost_request"
	// FaultCrash runs the tool, then cancels the invocation's context, as if
	// the worker died right after the effect; the suite delivers the
	// invocation again. A later call of the crashed invocation is not
	// executed: the goroutine that makes it ends when it descends from the
	// invocation, and gets an error matching context.Canceled when it does
	// not (a pool's worker that Setup started, which the restart and later
	// scenarios still need; the trace notes it). A crashed invocation
	// whose goroutines are left waiting for those the crash ended is taken
	// as gone once it cannot go on by itself (crash_idle.go), and is
	// delivered again.
	FaultCrash FaultKind = "crash_restart"
	// FaultConflict fails the call before the tool runs with a conflict, as
	// one failed member of a parallel batch.
	FaultConflict FaultKind = "partial_batch_failure"
)

// Fault targets one call: the Occurrence-th call (1-based, counted over the
// whole run) of the op named Op.
type Fault struct {
	Kind       FaultKind `json:"kind"`
	Op         string    `json:"op"`
	Occurrence int       `json:"occurrence"`
}

// String returns "op#k kind".
func (f Fault) String() string {
	return f.Op + "#" + strconv.Itoa(f.Occurrence) + " " + string(f.Kind)
}

// InjectedError is the error a wrapper returns for an injected fault. It
// matches ErrInjected, and a lost acknowledgement also matches
// context.DeadlineExceeded and reports Timeout() == true, as a network
// timeout would.
type InjectedError struct {
	Fault Fault
}

// Error says which op failed and how, in words an agent log can use.
func (e *InjectedError) Error() string { return e.Fault.Op + e.says() }

// says is what Error says after the op's name.
func (e *InjectedError) says() string {
	switch e.Fault.Kind {
	case FaultLostAck:
		return ": timeout waiting for the result (injected lost acknowledgement)"
	case FaultBefore:
		return ": unavailable (injected failure before the operation)"
	case FaultLostRequest:
		return ": timeout waiting for the result (injected lost request: the operation did not run)"
	case FaultCrash:
		return ": invocation cancelled after the operation (injected crash)"
	case FaultConflict:
		return ": conflict (injected failure of one call of a parallel batch)"
	}
	return ": injected fault"
}

// Is matches ErrInjected, and context.DeadlineExceeded for a lost
// acknowledgement, context.Canceled for a crash.
func (e *InjectedError) Is(target error) bool {
	switch target {
	case ErrInjected:
		return true
	case context.DeadlineExceeded:
		return e.Timeout()
	case context.Canceled:
		return e.Fault.Kind == FaultCrash
	}
	return false
}

// Timeout reports whether the fault looks like a timeout (a lost
// acknowledgement or a lost request).
func (e *InjectedError) Timeout() bool {
	return e.Fault.Kind == FaultLostAck || e.Fault.Kind == FaultLostRequest
}

// Temporary reports true: every injected fault is worth a retry to the agent.
func (e *InjectedError) Temporary() bool { return true }

// PanicError is returned by a wrapper whose tool panicked.
type PanicError struct {
	Op    string
	Value any
}

// Error names the op and the panic value.
func (e *PanicError) Error() string { return fmt.Sprintf("%s panicked: %v", e.Op, e.Value) }

// Unwrap returns ErrPanicked.
func (e *PanicError) Unwrap() error { return ErrPanicked }
