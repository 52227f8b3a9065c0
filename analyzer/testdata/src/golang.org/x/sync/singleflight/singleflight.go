// Package singleflight is a stub of golang.org/x/sync/singleflight for the
// analyzer's tests.
package singleflight

// Group joins the calls of one key in flight.
type Group struct{}

// Result is what DoChan delivers.
type Result struct {
	Val    any
	Err    error
	Shared bool
}

// Do runs fn once for the calls of key in flight together.
func (g *Group) Do(key string, fn func() (any, error)) (v any, err error, shared bool) {
	v, err = fn()
	return v, err, false
}

// DoChan is Do with the result on a channel.
func (g *Group) DoChan(key string, fn func() (any, error)) <-chan Result {
	c := make(chan Result, 1)
	v, err := fn()
	c <- Result{Val: v, Err: err}
	return c
}
