package runtime

import (
	"fmt"
	"testing"
)

// TestDeliveryErrorOfAnInjectedFault checks that a delivery that failed with
// an injected fault, as it is or wrapped, or with a nil one, is said as
// "delivery N: " and errorText's words.
func TestDeliveryErrorOfAnInjectedFault(t *testing.T) {
	var nilErr *InjectedError
	errs := []error{nilErr}
	for _, k := range []FaultKind{FaultNone, FaultBefore, FaultLostAck, FaultLostRequest, FaultCrash, FaultConflict, "other"} {
		e := &InjectedError{Fault: Fault{Kind: k, Op: "Ledger.Post"}}
		errs = append(errs, e, fmt.Errorf("posting: %w", e))
	}
	for i, err := range errs {
		if got, want := deliveryError(i+1, err), fmt.Sprintf("delivery %d: %s", i+1, errorText(err)); got != want {
			t.Errorf("deliveryError = %q, want %q", got, want)
		}
	}
}
