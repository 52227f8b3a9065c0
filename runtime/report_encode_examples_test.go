package runtime_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/agentidem/agentidem-go/examples/invoices"
	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/examples/shop"
	"github.com/agentidem/agentidem-go/examples/tickets"
	"github.com/agentidem/agentidem-go/runtime"
)

// TestReportEncoderOnExamples writes the reports of the examples' agents,
// buggy and fixed, and checks each against the reflection path.
func TestReportEncoderOnExamples(t *testing.T) {
	var bank *refund.Bank
	bankSetup := runtime.Setup(func(context.Context) error { bank = refund.NewBank(100, "payment-123"); return nil })
	oneRefund := runtime.Invariant("at most one refund", func(*runtime.Trace) error {
		if n := len(bank.Refunds()); n > 1 {
			return fmt.Errorf("payment refunded %d times", n)
		}
		return nil
	})
	var desk *tickets.Helpdesk
	deskSetup := runtime.Setup(func(context.Context) error { desk = tickets.NewHelpdesk(); return nil })
	var billing *invoices.Billing
	billingSetup := runtime.Setup(func(context.Context) error { billing = invoices.NewBilling(); return nil })
	svc := shop.NewService(map[string]int{"espresso": 350, "croissant": 280})
	srv := httptest.NewServer(svc)
	defer srv.Close()
	client := &shop.Client{Base: srv.URL}

	agents := []struct {
		name string
		fn   func(context.Context) error
		opts []runtime.Option
	}{
		{"refund naive", func(ctx context.Context) error {
			_, err := (&refund.NaiveAgent{Bank: bank}).Run(ctx, "payment-123")
			return err
		}, []runtime.Option{bankSetup, oneRefund}},
		{"refund reread", func(ctx context.Context) error {
			_, err := (&refund.RereadAgent{Bank: bank}).Run(ctx, "payment-123")
			return err
		}, []runtime.Option{bankSetup, oneRefund}},
		{"refund keyed", func(ctx context.Context) error {
			_, err := (&refund.KeyedAgent{Bank: bank}).Run(ctx, "payment-123")
			return err
		}, []runtime.Option{bankSetup, oneRefund, runtime.ExactlyOnce()}},
		{"refund give up", func(ctx context.Context) error {
			_, err := (&refund.GiveUpAgent{Bank: bank}).Run(ctx, "payment-123")
			return err
		}, []runtime.Option{bankSetup, runtime.ExactlyOnce()}},
		{"refund silent", func(ctx context.Context) error {
			_, err := (&refund.SilentAgent{Bank: bank}).Run(ctx, "payment-123")
			return err
		}, []runtime.Option{bankSetup, runtime.ExactlyOnce()}},
		{"tickets", func(ctx context.Context) error { _, err := (&tickets.Agent{Desk: desk}).Run(ctx, "D-1"); return err }, []runtime.Option{deskSetup, runtime.ExactlyOnce()}},
		{"tickets fresh key", func(ctx context.Context) error {
			_, err := (&tickets.FreshKeyAgent{Desk: desk}).Run(ctx, "D-1")
			return err
		}, []runtime.Option{deskSetup}},
		{"tickets check then create", func(ctx context.Context) error {
			_, err := (&tickets.CheckThenCreateAgent{Desk: desk}).Run(ctx, "D-1")
			return err
		}, []runtime.Option{deskSetup}},
		{"invoices dependency", func(ctx context.Context) error { return (&invoices.DependencyAgent{Billing: billing}).Run(ctx) }, []runtime.Option{billingSetup}},
		{"invoices seats", func(ctx context.Context) error {
			_, err := (&invoices.SeatsAgent{Billing: billing}).Run(ctx)
			return err
		}, []runtime.Option{billingSetup, runtime.Outcome(func() any { return billing })}},
		{"invoices adjust", func(ctx context.Context) error { return (&invoices.AdjustAgent{Billing: billing}).Run(ctx) }, []runtime.Option{billingSetup}},
		{"invoices lines", func(ctx context.Context) error { return (&invoices.LinesAgent{Billing: billing}).Run(ctx) }, []runtime.Option{billingSetup}},
		{"shop", func(ctx context.Context) error {
			_, err := (&shop.Agent{Tools: client, Retries: 2}).Buy(ctx, "ada", "espresso", "croissant")
			return err
		}, []runtime.Option{runtime.Setup(func(context.Context) error { svc.Reset(); return nil })}},
	}
	for _, a := range agents {
		rep, err := runtime.Run(context.Background(), a.name, a.fn, a.opts...)
		if err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
		rep.Problems = runtime.GroupFindings(rep.Findings)
		runtime.CheckReportEncoding(t, a.name, rep)
	}
}
