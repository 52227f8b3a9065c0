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

// A goroutine started by agent code is agent code.
func launchedByAgent(ctx context.Context, id string) {
	billing.CreateInvoiceTraced(ctx, id)
	go func() {
		billing.AttachInvoice(ctx, id) // want `direct call of AttachInvoice in agent code`
	}()
}

// A literal of its own that calls a wrapper is agent code.
func agentLiteral(ctx context.Context, id string) func() error {
	return func() error {
		billing.CreateInvoiceTraced(ctx, id)
		return billing.AttachInvoice(ctx, id) // want `direct call of AttachInvoice in agent code`
	}
}

// A test that runs an agent and then reads the state directly: the read
// is not agent code.
func runThenCheck(ctx context.Context, id string, run func(func() error) error) error {
	agent := func() error { return billing.CreateInvoiceTraced(ctx, id) }
	check := func() error { return billing.CreateInvoice(ctx, id) }
	if err := run(agent); err != nil {
		return err
	}
	return check()
}

// A benchmark that times the direct call beside the wrapper.
func timeBoth(ctx context.Context, id string) {
	direct := func() { billing.CreateInvoice(ctx, id) }
	traced := func() { billing.CreateInvoiceTraced(ctx, id) }
	direct()
	traced()
}
