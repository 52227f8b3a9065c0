package methods

import (
	"context"
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
