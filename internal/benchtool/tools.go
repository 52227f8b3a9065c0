// Package benchtool is the subject of the wrapper benchmarks: one annotated
// tool, Store.Put, that inserts into a map under a mutex, and its generated
// wrapper Store.PutTraced; Store.PutReq does the same with its value in a
// request struct, for the cost of recording a pointer argument.
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

// Req is the request of PutReq.
type Req struct {
	V int
}

// PutReq sets key to req.V: Put with its value in a request struct, so
// that its wrapper records a pointer argument, which the runtime encodes
// when the call begins (BenchmarkWrapperActivePointer).
//
//agentidem:write identity=key
func (s *Store) PutReq(ctx context.Context, key string, req *Req) error {
	s.mu.Lock()
	s.m[key] = req.V
	s.mu.Unlock()
	return nil
}

// Len returns the number of keys.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
