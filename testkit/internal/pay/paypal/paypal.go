// Package paypal is one of two payment gateways whose tools have one name,
// Gateway.Refund (the other is in ../stripe): a test binary that links both tells
// their ops apart by package (runtime.Declare).
package paypal

import (
	"context"
	"sync"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

// Gateway refunds payments, counting the refunds of each.
type Gateway struct {
	mu      sync.Mutex
	Refunds map[string]int
}

// New returns a gateway with no refunds.
func New() *Gateway { return &Gateway{Refunds: map[string]int{}} }

// Refund refunds payment once more.
//
//agentidem:write identity=payment
func (g *Gateway) Refund(ctx context.Context, payment string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Refunds[payment]++
	return nil
}
