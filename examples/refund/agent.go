// Package refund is the refund agent of the AgentIdem docs: read the
// payment, refund it if it is paid.
package refund

import "context"

// Agent refunds a payment through the bank's traced tools.
type Agent struct {
	Bank *Bank
}

// Run reads the payment and refunds it if it is still paid.
func (a *Agent) Run(ctx context.Context, paymentID string) (Receipt, error) {
	p, err := a.Bank.GetPaymentTraced(ctx, paymentID)
	if err != nil {
		return Receipt{}, err
	}
	if p.Status != "paid" {
		return Receipt{}, nil
	}
	return a.Bank.RefundTraced(ctx, paymentID)
}
