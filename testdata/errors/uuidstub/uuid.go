// Package uuid stands in for github.com/google/uuid in the generator's
// error tests: only its names matter.
package uuid

// UUID is a random identifier.
type UUID [16]byte

// New returns a fresh random UUID.
func New() UUID { return UUID{} }

// NewString returns a fresh random UUID as a string.
func NewString() string { return "" }

// String formats u.
func (u UUID) String() string { return "" }
