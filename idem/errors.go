package idem

import (
	"errors"
	"fmt"
)

// ErrKeyConflict is returned by Do when the key is already used with
// different params: the same key was derived for two different pieces of
// work, which is a bug in how the key is built, never a retry.
var ErrKeyConflict = errors.New("idem: key already used with different params")

// ErrInProgress is returned by Do, under the Fail in-progress policy, when
// another call holds the key and has not finished yet.
var ErrInProgress = errors.New("idem: key is in progress in another call")

// ErrLeaseLost is returned when the pending record a call held was taken
// over by another call after its lease ran out (the holder stalled longer
// than the lease). The work may have run twice: lengthen the lease.
var ErrLeaseLost = errors.New("idem: lease on key lost")

// ErrPermanent is matched, with errors.Is, by errors marked with Permanent
// and by the stored copies of such errors that Do replays.
var ErrPermanent = errors.New("idem: permanent failure")

// Permanent marks err as a permanent failure: a Store keeps it under the key
// like a result, and every later call with that key gets it back without
// running fn again. Unmarked errors release the key so a retry can run.
// Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string        { return e.err.Error() }
func (e *permanentError) Unwrap() error        { return e.err }
func (e *permanentError) Is(target error) bool { return target == ErrPermanent }

// StoredError is the error Do returns when it replays a stored permanent
// failure: the message of the original error (its type and wrapped chain
// do not survive storage). It matches ErrPermanent.
type StoredError struct {
	// Message is the Error() text of the original failure.
	Message string
}

// Error returns the stored message.
func (e *StoredError) Error() string { return e.Message }

// Is reports whether target is ErrPermanent.
func (e *StoredError) Is(target error) bool { return target == ErrPermanent }

// keyError adds the key to err.
func keyError(op, key string, err error) error {
	return fmt.Errorf("idem: %s key %s: %w", op, shortKey(key), err)
}

func shortKey(key string) string {
	if len(key) > 16 {
		return key[:16]
	}
	return key
}
