package fixescape

import (
	"context"

	"billing"
)

func agent(ctx context.Context, s *billing.Svc, id string) error {
	if err := billing.CreateInvoiceTraced(ctx, id); err != nil {
		return err
	}
	if err := billing.AttachInvoice(ctx, id); err != nil { // want `direct call of AttachInvoice`
		return err
	}
	if err := billing.Charge(ctx, id, "k"); err != nil { // want `direct call of charge|direct call of Charge`
		return err
	}
	return s.Refund(ctx, id, 5) // want `direct call of Svc.Refund`
}
