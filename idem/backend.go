package idem

import (
	"context"
	"time"
)

// State is the state of a key's record.
type State uint8

const (
	// Pending means a call holds the key and its fn is running (or its
	// holder died and the lease has not run out yet).
	Pending State = iota + 1
	// Done means the key's outcome is stored: a result, or a permanent
	// failure.
	Done
)

// String returns "pending" or "done".
func (s State) String() string {
	switch s {
	case Pending:
		return "pending"
	case Done:
		return "done"
	}
	return "invalid"
}

// Claim is what a call asks of Backend.Claim.
type Claim struct {
	// Token identifies this attempt as the holder of the key.
	Token string
	// Params is the fingerprint of the call's params.
	Params string
	// Lease is how long the pending record stays owned without renewal.
	Lease time.Duration
}

// Record is the state of a key as Backend.Claim found or made it.
type Record struct {
	// State is Pending or Done.
	State State
	// Params is the fingerprint of the params the key was first used with.
	Params string
	// Owned reports that the claim created (or took over) the pending
	// record: the caller now holds the key and must Complete or Release it.
	Owned bool
	// Abandoned reports, with Owned, that the claim took over a pending
	// record whose holder's lease had run out: its fn may or may not have
	// produced its effect.
	Abandoned bool
	// Result is the stored result of a Done record, or the message of a
	// stored permanent failure when Failed.
	Result []byte
	// Failed reports that a Done record stores a permanent failure.
	Failed bool
}

// Outcome is what Backend.Complete stores.
type Outcome struct {
	// Result is the encoded result, or the failure message when Failed.
	Result []byte
	// Failed marks a stored permanent failure.
	Failed bool
}

// Backend is the byte-level storage a Store runs on. The in-memory backend
// is Memory; SQLite and PostgreSQL backends live in the nested modules
// github.com/agentidem/agentidem-go/idem/sqlite and .../idem/postgres. Every
// backend passes the contract suite in package idemtest.
//
// A backend enforces one record per key atomically (a unique constraint),
// which is what makes Do safe: two claims of the same key can never both be
// Owned while the first one's lease is live.
type Backend interface {
	// Claim atomically reads or creates the record of key. When key has no
	// live record (none, or a Done one past its expiry), it creates a
	// Pending record held by c.Token and returns it Owned. When the key is
	// Pending, its lease has run out and its params equal c.Params, it hands
	// the record to c.Token and returns it Owned and Abandoned. Otherwise it
	// returns the record as it is, not Owned.
	Claim(ctx context.Context, key string, c Claim) (Record, error)
	// Extend renews the lease of the Pending record of key held by token,
	// or returns ErrLeaseLost when token no longer holds it.
	Extend(ctx context.Context, key, token string, lease time.Duration) error
	// Complete stores out under the Pending record of key held by token and
	// makes it Done, to expire after ttl; ErrLeaseLost when token no longer
	// holds it.
	Complete(ctx context.Context, key, token string, out Outcome, ttl time.Duration) error
	// Release deletes the Pending record of key held by token, so a later
	// call can run; it is not an error when token no longer holds it.
	Release(ctx context.Context, key, token string) error
	// Purge deletes Done records past their expiry and reports how many.
	Purge(ctx context.Context) (int64, error)
}

// Watcher is an optional interface of a Backend that can wake the calls
// waiting for a key as soon as its holder completes or releases it, instead
// of at their next poll. Waiters still poll, for holders that die.
type Watcher interface {
	// Watch returns a channel that is closed at the next Complete or
	// Release of key, and a stop func that the caller calls when it no
	// longer waits. Each call gets a channel of its own, made by the calling
	// goroutine (so a waiter inside a testing/synctest bubble is durably
	// blocked on it). Call Watch before the Claim that may find the key
	// pending, so that no change is missed between the two.
	Watch(key string) (changed <-chan struct{}, stop func())
}
