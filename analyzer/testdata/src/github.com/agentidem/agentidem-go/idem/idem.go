// Package idem is a stand-in for agentidem-go's idem in analyzer tests.
package idem

import "context"

// Store records the results of keyed calls.
type Store struct{}

// Do runs fn once per key.
func Do(ctx context.Context, s *Store, key string, fn func(context.Context) error) error {
	return fn(ctx)
}
