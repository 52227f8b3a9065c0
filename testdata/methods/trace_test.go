package methods

import (
	"context"
	"errors"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testdata/tracecheck"
)

func TestTrace(t *testing.T) {
	b := NewBank("x")
	r := Rates{Fee: 2}
	tr, err := runtime.RunTraced(context.Background(), "methods", func(ctx context.Context) error {
		if _, err := b.DepositTraced(ctx, Account{ID: "x"}, 50); err != nil {
			return err
		}
		if _, err := b.DepositTraced(ctx, Account{ID: "nope"}, 1); err == nil {
			t.Error("deposit into a missing account succeeded")
		}
		if _, err := b.BalanceTraced("x"); err != nil {
			return err
		}
		r.QuoteTraced(ctx, 100)
		if _, err := r.ChargeTraced(10); err != nil {
			return err
		}
		return b.CloseTraced()
	})
	if err != nil {
		t.Fatal(err)
	}
	tracecheck.Expect(t, tr,
		`Bank.Deposit write args={"acct":{"ID":"x","Balance":0},"amount":50} identity=["x",50] entity=["x",50] success/received result={"ID":"x","Balance":50}`,
		`Bank.Deposit write args={"acct":{"ID":"nope","Balance":0},"amount":1} identity=["nope",1] entity=["nope",1] failed/failed result={"ID":"","Balance":0} error=no such account`,
		`Bank.Balance read args={"id":"x"} identity= entity="x" success/received result=50`,
		`Rates.Quote read args={"amount":100} identity= entity= success/received result=2`,
		`Rates.Charge write args={"amount":10} identity=[2,10] entity=[2,10] success/received result=12`,
		`Bank.Close write args={} identity="closed" entity="closed" success/received result=null`,
	)
}

// TestLostAcknowledgement runs the generated wrapper under a lost
// acknowledgement: the deposit happens, but the agent gets the zero Account
// and an injected timeout instead of the tool's answer.
func TestLostAcknowledgement(t *testing.T) {
	b := NewBank("x")
	var got Account
	var gotErr error
	agent := func(ctx context.Context) error {
		got, gotErr = b.DepositTraced(ctx, Account{ID: "x"}, 50)
		return nil
	}
	s := runtime.NewSuite("methods", agent)
	if _, err := s.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got.Balance != 50 || gotErr != nil {
		t.Fatalf("baseline deposit = %+v, %v", got, gotErr)
	}
	res, err := s.RunScenario(context.Background(), runtime.Scenario{
		Name:       "lost_acknowledgement/Bank.Deposit#1",
		Kind:       string(runtime.FaultLostAck),
		Fault:      runtime.Fault{Kind: runtime.FaultLostAck, Op: "Bank.Deposit", Occurrence: 1},
		Deliveries: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != (Account{}) || !errors.Is(gotErr, runtime.ErrInjected) {
		t.Errorf("under a lost acknowledgement the agent saw %+v, %v; want the zero Account and runtime.ErrInjected", got, gotErr)
	}
	if b.accounts["x"].Balance != 100 {
		t.Errorf("the deposit did not execute under the lost acknowledgement: balance %d", b.accounts["x"].Balance)
	}
	tracecheck.Expect(t, res.Trace,
		`Bank.Deposit write args={"acct":{"ID":"x","Balance":0},"amount":50} identity=["x",50] entity=["x",50] success/lost result={"ID":"x","Balance":100}`,
	)
}
