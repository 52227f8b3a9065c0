// Package methods holds annotated methods with pointer and value
// receivers.
package methods

import (
	"context"
	"errors"
	"sync"
)

// Account is one account.
type Account struct {
	ID      string
	Balance int
}

// Bank keeps accounts.
type Bank struct {
	mu       sync.Mutex
	accounts map[string]*Account
}

// NewBank returns a bank with the given accounts.
func NewBank(ids ...string) *Bank {
	b := &Bank{accounts: map[string]*Account{}}
	for _, id := range ids {
		b.accounts[id] = &Account{ID: id}
	}
	return b
}

// Deposit has a pointer receiver; its identity reads a struct field.
//
//agentidem:write identity=acct.ID,amount
func (b *Bank) Deposit(ctx context.Context, acct Account, amount int) (Account, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.accounts[acct.ID]
	if !ok {
		return Account{}, errors.New("no such account")
	}
	a.Balance += amount
	return *a, nil
}

// Balance has a pointer receiver and no context.
//
//agentidem:read entity=id
func (b *Bank) Balance(id string) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.accounts[id].Balance, nil
}

// Rates is a value type with methods.
type Rates struct{ Fee int }

// Quote has a value receiver.
//
//agentidem:read
func (r Rates) Quote(ctx context.Context, amount int) int { return amount * r.Fee / 100 }

// Charge has a value receiver whose name is used in the identity.
//
//agentidem:write identity=r.Fee,amount
func (r Rates) Charge(amount int) (int, error) { return amount + r.Fee, nil }

// Close has an unnamed receiver.
//
//agentidem:write identity="\"closed\""
func (*Bank) Close() error { return nil }
