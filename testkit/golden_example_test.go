package testkit_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/testkit"
)

// goldenT is a testkit.TB that prints the golden trace's failures; in a
// real test, pass t.
type goldenT struct{ printT }

func (goldenT) Errorf(f string, args ...any) {
	if msg := fmt.Sprintf(f, args...); strings.Contains(msg, "golden trace") {
		fmt.Println("FAIL:", msg)
	}
}

// Golden keeps the agent's fault-free calls in testdata/refund.trace.json
// (recorded with AGENTIDEM_UPDATE=1 go test -run TestRefund). The keyed agent it was
// recorded from passes; the naive agent, which refunds without a key,
// fails with the difference.
func ExampleGolden() {
	var bank *refund.Bank
	setup := testkit.Setup(func(context.Context) error { bank = refund.NewBank(100, "payment-123"); return nil })
	golden := testkit.Golden("testdata/refund.trace.json")

	testkit.TestAgent(goldenT{}, func(ctx context.Context) error {
		_, err := (&refund.KeyedAgent{Bank: bank}).Run(ctx, "payment-123")
		return err
	}, setup, golden, testkit.NoSummary())
	fmt.Println("keyed agent: same calls")

	testkit.TestAgent(goldenT{}, func(ctx context.Context) error {
		_, err := (&refund.NaiveAgent{Bank: bank}).Run(ctx, "payment-123")
		return err
	}, setup, golden, testkit.NoSummary())
	// Output:
	// keyed agent: same calls
	// FAIL: testkit: the agent's fault-free calls differ from the golden trace testdata/refund.trace.json (- recorded, + now):
	//   invocation 1:
	//       read  getPayment
	//     - write refundWithKey "payment-123"
	//     + write refund "payment-123"
	// If the change is intended, record it again with
	//     go test github.com/agentidem/agentidem-go/testkit -run '^TestRefund$' -update
}
