// Package writesdispatch holds an agent running the tool calls a model
// returned, each in a goroutine, dispatched by the call's name (red team
// fF): a write on the conversation's entity runs at the turns whose call
// names it, as many as the model asked for, not at each turn.
package writesdispatch

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

//agentidem:write identity=orderID
func attachInvoice(orderID string) error { return nil }

//agentidem:write identity=to,subject
func sendEmail(to, subject, body string) error { return nil }

//agentidem:write identity=post
func setTitle(post, title string) error { return nil }

type toolCall struct{ Name, Body string }

func bySwitch(ctx context.Context, order, customer string, calls []toolCall) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, tc := range calls {
		g.Go(func() error {
			switch tc.Name {
			case "attach_invoice":
				return attachInvoice(order)
			case "send_update", "notify":
				return sendEmail(customer, "update", tc.Body)
			}
			return nil
		})
	}
	return g.Wait()
}

func byIf(order string, calls []toolCall) {
	var wg sync.WaitGroup
	for _, tc := range calls {
		wg.Go(func() {
			if tc.Name == "attach_invoice" {
				attachInvoice(order)
			}
		})
	}
	wg.Wait()
}

func byTaglessSwitch(order string, calls []toolCall) {
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			switch {
			case calls[i].Name == "attach_invoice" && order != "":
				attachInvoice(order)
			}
		})
	}
	wg.Wait()
}

// The twins that run at many turns: still reported.

// A filter keeps most turns: every non-empty title is set at once.
func filtered(post string, titles []string) {
	var wg sync.WaitGroup
	for _, t := range titles {
		wg.Go(func() {
			if t != "" {
				setTitle(post, t) // want `setTitle writes on the same entity \(post\) start at each turn of a loop`
			}
		})
	}
	wg.Wait()
}

// A test of something that is the same at every turn selects all or none.
func sameEveryTurn(order, mode string, calls []toolCall) {
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if mode == "attach" {
				attachInvoice(order) // want `attachInvoice writes on the same entity \(order\) start at each turn of a loop`
			}
		})
	}
	wg.Wait()
}

// The default clause runs at every turn no case names.
func byDefault(order string, calls []toolCall) {
	var wg sync.WaitGroup
	for _, tc := range calls {
		wg.Go(func() {
			switch tc.Name {
			case "noop":
			default:
				attachInvoice(order) // want `attachInvoice writes on the same entity \(order\) start at each turn of a loop`
			}
		})
	}
	wg.Wait()
}

// Arithmetic on the turn selects many turns: every other one.
func everyOther(order string, calls []toolCall) {
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			if i%2 == 0 {
				attachInvoice(order) // want `attachInvoice writes on the same entity \(order\) start at each turn of a loop`
			}
		})
	}
	wg.Wait()
}
