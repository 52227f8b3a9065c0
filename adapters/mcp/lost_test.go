package agentidemmcp_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/runtime"
)

// TestLostMatchesTheRuntimesText: the runtime's injected timeouts, as
// their text reaches a client inside an SDK's error, come back matching
// context.DeadlineExceeded and runtime.ErrInjected; other errors, the
// other faults' and nil are left as they are.
func TestLostMatchesTheRuntimesText(t *testing.T) {
	wire := func(kind runtime.FaultKind) error {
		ie := &runtime.InjectedError{Fault: runtime.Fault{Kind: kind, Op: "open_ticket", Occurrence: 1}}
		return fmt.Errorf("calling %q: %s", "tools/call", ie.Error()) // a JSON-RPC error: text only
	}
	for _, kind := range []runtime.FaultKind{runtime.FaultLostAck, runtime.FaultLostRequest} {
		err := agentidemmcp.Lost(wire(kind))
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, runtime.ErrInjected) {
			t.Errorf("%s: %v does not match context.DeadlineExceeded and runtime.ErrInjected", kind, err)
		}
		if err.Error() != wire(kind).Error() {
			t.Errorf("%s: the text changed: %q", kind, err)
		}
		var to interface{ Timeout() bool }
		if !errors.As(err, &to) || !to.Timeout() {
			t.Errorf("%s: no Timeout() true", kind)
		}
	}
	for _, err := range []error{wire(runtime.FaultBefore), wire(runtime.FaultCrash), errors.New("timeout talking to the database")} {
		if got := agentidemmcp.Lost(err); got != err || errors.Is(got, context.DeadlineExceeded) {
			t.Errorf("Lost(%q) = %v, want it as it is", err, got)
		}
	}
	if agentidemmcp.Lost(nil) != nil {
		t.Error("Lost(nil) is not nil")
	}
}
