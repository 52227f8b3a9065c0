package idem_test

import (
	"context"
	"fmt"

	"github.com/agentidem/agentidem-go/idem"
)

// Receipt is what the payment provider returns for a refund.
type Receipt struct {
	RefundID string `json:"refund_id"`
	Cents    int    `json:"cents"`
}

// refunds counts the refunds the (fake) payment provider actually made.
var refunds int

// refund is an agent's tool: retried, redelivered or run twice in parallel,
// it refunds an order once. The key is the identity of the work (this order's
// refund), never a random value per attempt.
func refund(ctx context.Context, store *idem.Store, orderID string, cents int) (Receipt, bool, error) {
	return idem.Do(ctx, store, idem.Key("refund", orderID), cents,
		func(ctx context.Context) (Receipt, error) {
			refunds++ // the real effect: call the payment provider
			return Receipt{RefundID: fmt.Sprintf("re_%d", refunds), Cents: cents}, nil
		})
}

func Example() {
	store := idem.NewMemory() // or a Store on the SQLite or PostgreSQL backend
	ctx := context.Background()

	r1, replayed1, err := refund(ctx, store, "order-42", 500)
	fmt.Println(r1, replayed1, err)

	// The agent retries after a lost acknowledgement: same key, same params.
	r2, replayed2, err := refund(ctx, store, "order-42", 500)
	fmt.Println(r2, replayed2, err)

	// A different amount under the same key is a bug, not a retry.
	_, _, err = refund(ctx, store, "order-42", 900)
	fmt.Println(err != nil)

	fmt.Println("refunds made:", refunds)
	// Output:
	// {re_1 500} false <nil>
	// {re_1 500} true <nil>
	// true
	// refunds made: 1
}

func ExamplePermanent() {
	store := idem.NewMemory()
	ctx := context.Background()
	charge := func() (string, bool, error) {
		return idem.Do(ctx, store, idem.Key("charge", "card-7"), 1200, func(ctx context.Context) (string, error) {
			return "", idem.Permanent(fmt.Errorf("card declined"))
		})
	}
	_, replayed, err := charge()
	fmt.Println(replayed, err)
	_, replayed, err = charge() // the decline is stored: the card is not charged again
	fmt.Println(replayed, err)
	// Output:
	// false card declined
	// true card declined
}
