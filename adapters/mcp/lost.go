package agentidemmcp

import (
	"context"
	"strings"

	"github.com/agentidem/agentidem-go/runtime"
)

// Lost returns err as the client of a call should see it. An injected lost
// acknowledgement or lost request reaches an MCP client as the text of the
// server's error (a JSON-RPC error carries no Go error across the wire), so
// an agent that retries on errors.Is(err, context.DeadlineExceeded), as
// code that waits with a deadline does, never took it for a timeout, and
// its retry was never tested. Lost makes such an error match
// context.DeadlineExceeded and runtime.ErrInjected and report Timeout(),
// as the same fault does in process (runtime.InjectedError); every other
// err, nil included, is returned as it is. gosdk.Propagate applies it to
// the calls it propagates; with mcp-go, wrap the error of CallTool:
// err = agentidemmcp.Lost(err). Outside a run nothing is injected, and
// nothing changes.
func Lost(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, marker := range lostMarkers {
		if strings.Contains(msg, marker) {
			return &lostError{err: err}
		}
	}
	return err
}

// lostMarkers end the text of runtime.InjectedError for the two faults a
// client sees as a timeout (TestLostMatchesTheRuntimesText).
var lostMarkers = []string{"(injected lost acknowledgement)", "(injected lost request: the operation did not run)"}

// lostError is an injected timeout that crossed the wire as text.
type lostError struct{ err error }

func (e *lostError) Error() string   { return e.err.Error() }
func (e *lostError) Unwrap() error   { return e.err }
func (e *lostError) Timeout() bool   { return true }
func (e *lostError) Temporary() bool { return true }

// Is matches context.DeadlineExceeded and runtime.ErrInjected.
func (e *lostError) Is(target error) bool {
	return target == context.DeadlineExceeded || target == runtime.ErrInjected
}
