// Package benchtool is the subject of the wrapper benchmarks: one annotated
// tool, Store.Put, that inserts into a map under a mutex, and its generated
// wrapper Store.PutTraced.
//
// The benchmarks compare a direct call, the wrapper with no run active (what
// production pays) and the wrapper inside runtime.RunTraced (what a test
// pays). scripts/bench/core.sh runs them and prints the table:
//
//	scripts/bench/core.sh            # -count 5
//	COUNT=10 scripts/bench/core.sh
package benchtool

import (
	"context"
	"sync"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

// Store is a map guarded by a mutex.
type Store struct {
	mu sync.Mutex
	m  map[string]int
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{m: map[string]int{}} }

// Put sets key to v.
//
//agentidem:write identity=key
func (s *Store) Put(ctx context.Context, key string, v int) error {
	s.mu.Lock()
	s.m[key] = v
	s.mu.Unlock()
	return nil
}

// Len returns the number of keys.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
