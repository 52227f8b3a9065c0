// Package idempotency is not package idem, though its path begins so: it
// runs fn every time.
package idempotency

import "context"

// Do runs fn.
func Do(ctx context.Context, key string, fn func(context.Context) error) error { return fn(ctx) }
