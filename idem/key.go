package idem

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/agentidem/agentidem-go/runtime"
)

// Key derives an idempotency key from the identity of the work: the hex
// SHA-256 of runtime.Canonical(parts...), the same canonical JSON the
// runtime uses for the identity of a traced write. Build it from what makes
// the work the same work across retries and redeliveries (session,
// scenario, intent, the entity), never from a random value or a clock:
//
//	idem.Key("refund", orderID)        // one refund per order
//	idem.Key("ticket", sessionID, msg) // one ticket per session and message
//
// With one part the hashed text is that part's JSON ("\"refund\""); with
// several it is the JSON array of the parts. Equal values give equal keys in
// any process; map keys are sorted. Key panics, with an "idem:" prefix, when a
// part cannot be encoded as JSON (a func, a channel, cyclic data): that is a
// programming error. Use KeyOf to get an error instead.
func Key(parts ...any) string {
	k, err := KeyOf(parts...)
	if err != nil {
		panic(err.Error())
	}
	return k
}

// KeyOf is Key returning an error instead of panicking when a part cannot be
// canonicalized.
func KeyOf(parts ...any) (string, error) {
	c, err := runtime.Canonical(parts...)
	if err != nil {
		return "", fmt.Errorf("idem: key: %w", err)
	}
	return hashString(c), nil
}

// Fingerprint returns the fingerprint of a call's params that Do stores with
// a key (Claim.Params, Record.Params): the hex SHA-256 of their canonical
// JSON. A later call with the same key and another fingerprint is
// ErrKeyConflict.
func Fingerprint(params any) (string, error) {
	c, err := runtime.Canonical(params)
	if err != nil {
		return "", fmt.Errorf("idem: params: %w", err)
	}
	return hashString(c), nil
}

func hashString(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
