package testkit_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/testkit"
)

// printT is a testkit.TB that prints failures; in a real test, pass t.
type printT struct{}

func (printT) Helper()             {}
func (printT) Name() string        { return "TestRefund" }
func (printT) Logf(string, ...any) {}
func (printT) Errorf(f string, args ...any) {
	msg, _, _ := strings.Cut(fmt.Sprintf(f, args...), " (")
	fmt.Println("FAIL:", msg)
}

// TestAgent fails the test once per unsafe finding; here the naive refund
// agent retries after a lost acknowledgement and refunds twice. The problem
// is printed in full once, under the first scenario that shows it; a later
// scenario with the same problem fails with a line that points back.
func ExampleTestAgent() {
	var bank *refund.Bank
	rep := testkit.TestAgent(printT{}, func(ctx context.Context) error {
		_, err := (&refund.NaiveAgent{Bank: bank}).Run(ctx, "payment-123")
		return err
	}, testkit.Setup(func(context.Context) error {
		bank = refund.NewBank(100, "payment-123")
		return nil
	}))
	fmt.Println("safe:", rep.Safe)
	// Output:
	// FAIL: [duplicate_write] refund executed 2 times for identity "payment-123"
	// FAIL: [duplicate_write] refund for identity "payment-123", as in lost_acknowledgement/refund#1
	// safe: false
}
