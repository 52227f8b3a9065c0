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
	// FaultLostResponse loses the answer of the first request that is not
	// idempotent (a POST, a PATCH, one marked with WriteRequest) the call
	// sends through Transport: the request reaches the service, whose
	// answer is read and dropped, and the call's HTTP client gets a read
	// timeout (a *net.OpError, "read tcp HOST: i/o timeout"), which
	// retrying clients retry on. A client that retries sends the request again
	// inside the call, and the service applies it twice unless it
	// deduplicates it; a client that does not hands the error to the tool,
	// and the agent sees what the tool makes of it, as after a lost
	// acknowledgement. Planned only for writes whose baseline call sent
	// such a request through Transport.
	FaultLostResponse FaultKind = "lost_response"
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

// lostTarget returns the part of a lost_response scenario's name after
// its kind: "op#k" for the call's first write request, "op#k@r" for its
// r-th (Scenario.request).
func lostTarget(f Fault, request int) string {
	t := f.Op + "#" + strconv.Itoa(f.Occurrence)
	if request > 1 {
		t += "@" + strconv.Itoa(request)
	}
	return t
}

// InjectedError is the error a wrapper returns for an injected fault. It
// matches ErrInjected, and a lost acknowledgement also matches
// context.DeadlineExceeded and reports Timeout() == true, as a network
// timeout would.
//
// With Err set (FaultError chose it), the agent sees Err: its text, what
// errors.Is and errors.As find through it (a *url.Error, a status error
// of the agent's HTTP client), its Timeout and Temporary; the
// InjectedError still matches ErrInjected, and errors.As still finds it.
type InjectedError struct {
	Fault Fault
	// Err is the error FaultError gave for this fault, nil for the
	// runtime's own.
	Err error
}

// Error says which op failed and how, in words an agent log can use: Err's
// text when Err is set, as the agent's own code would have it.
func (e *InjectedError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Fault.Op + e.says()
}

// Unwrap returns Err (nil for the runtime's own error).
func (e *InjectedError) Unwrap() error { return e.Err }

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
	case FaultLostResponse:
		return ": timeout reading the response (injected lost response)"
	}
	return ": injected fault"
}

// Is matches ErrInjected, and context.DeadlineExceeded for a lost
// acknowledgement, context.Canceled for a crash. With Err set it matches
// ErrInjected only, and errors.Is goes on to Err: a 504 chosen for a lost
// acknowledgement is no context.DeadlineExceeded, as in production.
func (e *InjectedError) Is(target error) bool {
	if e.Err != nil {
		return target == ErrInjected
	}
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
// acknowledgement or a lost request); with Err set, what the first error
// of Err's chain with a Timeout method reports (as errors.As finds a
// net.Error there), false when none has one.
func (e *InjectedError) Timeout() bool {
	if e.Err != nil {
		var t interface{ Timeout() bool }
		return errors.As(e.Err, &t) && t.Timeout()
	}
	return e.Fault.Kind == FaultLostAck || e.Fault.Kind == FaultLostRequest
}

// Temporary reports true: every injected fault is worth a retry to the
// agent. With Err set, it reports what the first error of Err's chain
// with a Temporary method reports, false when none has one.
func (e *InjectedError) Temporary() bool {
	if e.Err != nil {
		var t interface{ Temporary() bool }
		return errors.As(e.Err, &t) && t.Temporary()
	}
	return true
}

// FaultError makes each fault the suite injects return the error fn gives
// for the faulted op and the kind of fault, wrapped in the
// *InjectedError, where fn gives one (nil keeps the runtime's own error
// for that fault). Give it the errors the agent's retry condition looks
// for. The runtime's own error matches context.DeadlineExceeded and
// reports Timeout() for a lost acknowledgement, but it is no *url.Error and
// carries no HTTP status: an agent that retries only on a *url.Error, or
// only on a 502/503/504 of its own HTTP client, never retried under test
// and was reported SAFE, while against a real lost answer it booked twice
// on every run (red team rtK; examples/booking). The report says so in a
// note when no injected fault was retried (Report.Notes).
//
// The agent then sees fn's error (InjectedError.Err): its text, what
// errors.Is and errors.As find in it, its Timeout; errors.Is(err,
// ErrInjected) still holds, and errors.As still finds the
// *InjectedError. For a lost acknowledgement the tool ran and the answer
// never came (a timeout, a connection reset, a gateway's 504); for a
// failure before the operation or a lost request it did not run (a
// connection refused, a 503); a partial batch failure is a conflict (a
// 409); a crash cancels the invocation, whatever the error. fn runs in
// the goroutine of the faulted call, once per fault, and may be called
// from several goroutines at once; a panic in it is the agent's
// (agent_panic). Given more than once, the functions are asked in the
// order given, and the first error one returns is the fault's: a function
// for one op, then one for every other. For lost_response (Transport), it
// is the error the transport's RoundTrip returns, which net/http's Client
// wraps in a *url.Error; nil keeps the read timeout.
//
//	runtime.FaultError(func(op string, kind runtime.FaultKind) error {
//		if kind == runtime.FaultLostAck {
//			return &url.Error{Op: "Post", URL: base + "/bookings", Err: context.DeadlineExceeded}
//		}
//		return nil
//	})
func FaultError(fn func(op string, kind FaultKind) error) Option {
	return optionFunc(func(c *config) {
		if fn == nil {
			return
		}
		prev := c.faultErr
		if prev == nil {
			c.faultErr = fn
			return
		}
		c.faultErr = func(op string, kind FaultKind) error {
			if err := prev(op, kind); err != nil {
				return err
			}
			return fn(op, kind)
		}
	})
}

// injected returns the error of fault f on call c: the runtime's own, with
// the error FaultError gives for it.
func (c *Call) injected(f FaultKind) *InjectedError {
	e := &InjectedError{Fault: Fault{Kind: f, Op: c.op.Name, Occurrence: int(c.rec.Occurrence)}}
	if fn := c.inv.rec.faultErr; fn != nil {
		e.Err = fn(c.op.Name, f)
	}
	return e
}

// PanicError is returned by a wrapper whose tool panicked.
type PanicError struct {
	Op    string
	Value any
}

// Error names the op and the panic value.
func (e *PanicError) Error() string { return fmt.Sprintf("%s panicked: %v", e.Op, e.Value) }

// Unwrap returns ErrPanicked.
func (e *PanicError) Unwrap() error { return ErrPanicked }
