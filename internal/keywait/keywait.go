// Package keywait tells package runtime, from package idem, which
// idempotency keys a call holds pending and which goroutine waits for one
// of them: the harness takes such a wait for a lock the holder's delivery
// holds (the agent's own serialization), and names the key and the
// holder, where a stack dump shows only a select in idem's poll loop.
// There is no public API for it: idem is the only caller, and runtime the
// only reader.
package keywait

import "context"

// Hold and Wait are set by package runtime when it is linked (always,
// with idem, which imports it); nil otherwise. Hold records that the call
// carrying ctx claimed key and runs its work holding it; Wait that the
// calling goroutine, with ctx, waits for key, which another call holds
// pending. Each returns the function that ends the record; outside an
// agentidem run both record nothing.
var (
	Hold func(ctx context.Context, key string) (release func())
	Wait func(ctx context.Context, key string) (done func())
)
