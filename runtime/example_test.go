package runtime_test

import (
	"context"
	"fmt"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/runtime"
)

// RunTraced runs an agent once and returns what it called.
func ExampleRunTraced() {
	bank := refund.NewBank(100, "payment-123")
	tr, err := runtime.RunTraced(context.Background(), "refund-agent", func(ctx context.Context) error {
		_, err := (&refund.NaiveAgent{Bank: bank}).Run(ctx, "payment-123")
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, op := range tr.Ops {
		fmt.Println(op.ID, op.Kind, op.Identity, op.Status, op.Observation)
	}
	// Output:
	// 1:getPayment#1 read  success received
	// 1:refund#1 write "payment-123" success received
}

// Run is the whole fault suite outside go test, for a CLI or a service
// that checks an agent before rolling it out.
func ExampleRun() {
	var bank *refund.Bank
	rep, err := runtime.Run(context.Background(), "refund-agent",
		func(ctx context.Context) error {
			_, err := (&refund.NaiveAgent{Bank: bank}).Run(ctx, "payment-123")
			return err
		},
		runtime.Setup(func(context.Context) error {
			bank = refund.NewBank(100, "payment-123") // a fresh world per scenario
			return nil
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("safe:", rep.Safe, "scenarios:", rep.FaultCount)
	for _, f := range rep.Problems { // one finding per problem
		fmt.Println(f.Code, f.Ops, f.Identities)
		for _, in := range f.SeenIn {
			fmt.Println("  seen in", in.Scenario)
		}
	}
	// Output:
	// safe: false scenarios: 6
	// duplicate_write [refund] ["payment-123"]
	//   seen in lost_acknowledgement/refund#1
	//   seen in duplicate_delivery/concurrent
}

// GoInfrastructure starts a library's own service goroutine (here a cache
// refresher, started on first use), which a suite never takes for the
// agent's, whichever call of a scenario starts it.
func ExampleGoInfrastructure() {
	refreshed := make(chan string)
	stop := make(chan struct{})
	runtime.GoInfrastructure(func() {
		for {
			select {
			case refreshed <- "rates refreshed":
			case <-stop:
				return
			}
		}
	})
	fmt.Println(<-refreshed)
	close(stop)
	// Output: rates refreshed
}
