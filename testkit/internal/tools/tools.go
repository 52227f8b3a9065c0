// Package tools holds small annotated tools for testkit's own tests.
package tools

import (
	"context"
	"fmt"
	"sync"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

// Ledger is a world with one kind of write.
type Ledger struct {
	mu      sync.Mutex
	Entries []string
	Rows    map[string]string
	Fail    bool // Post fails by itself
}

// Put writes entry under key: a repeat changes nothing (an upsert).
//
//agentidem:write identity=key name=put
func (l *Ledger) Put(ctx context.Context, key, entry string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Rows == nil {
		l.Rows = map[string]string{}
	}
	l.Rows[key] = entry
	return nil
}

// Snapshot is the ledger's observable state, for testkit.State.
func (l *Ledger) Snapshot() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return map[string]any{"entries": append([]string{}, l.Entries...), "rows": l.Rows}
}

// Post appends an entry.
//
//agentidem:write identity=key name=post
func (l *Ledger) Post(ctx context.Context, key, entry string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Fail {
		return fmt.Errorf("ledger closed")
	}
	l.Entries = append(l.Entries, entry)
	return nil
}

// Count reads the number of entries.
//
//agentidem:read name=count
func (l *Ledger) Count(ctx context.Context) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.Entries), nil
}

// Boom panics.
//
//agentidem:write identity=n name=boom
func (l *Ledger) Boom(ctx context.Context, n int) error {
	panic(fmt.Sprintf("boom %d", n))
}
