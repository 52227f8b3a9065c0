package escapes

import (
	"context"

	"billing"
)

//agentidem:write identity=id
func notify(id string) error { return nil }

func notifyTraced(id string) error { return notify(id) }

func agent(ctx context.Context, s *billing.Svc, id string) error {
	if err := billing.CreateInvoiceTraced(ctx, id); err != nil {
		return err
	}
	if err := billing.AttachInvoice(ctx, id); err != nil { // want `direct call of AttachInvoice in agent code escapes the trace: the harness can neither see nor fault it; call AttachInvoiceTraced`
		return err
	}
	if err := s.Refund(ctx, id, 5); err != nil { // want `direct call of Svc.Refund in agent code escapes the trace`
		return err
	}
	return notify(id) // want `direct call of notify in agent code escapes the trace`
}

// Not agent code: it calls no wrapper, so direct calls are the point.
func tool(ctx context.Context, id string) error {
	if err := billing.CreateInvoice(ctx, id); err != nil {
		return err
	}
	return billing.AttachInvoice(ctx, id)
}

// Agent code that goes through the wrappers only.
func tracedAgent(ctx context.Context, s *billing.Svc, id string) error {
	if err := billing.CreateInvoiceTraced(ctx, id); err != nil {
		return err
	}
	return s.RefundTraced(ctx, id, 5)
}

func ignoredEscape(ctx context.Context, id string) error {
	if err := billing.CreateInvoiceTraced(ctx, id); err != nil {
		return err
	}
	return notify(id) //agentidem:ignore notifications are outside the harness on purpose
}
