// Package syncutil has a helper that waits on what it is passed, in a
// package of its own (WaitsFact).
package syncutil

import (
	"sync"

	"golang.org/x/sync/errgroup"
)

// WaitAll waits for the group's goroutines.
func WaitAll(g *errgroup.Group) error { return g.Wait() }

// Counter counts under a mutex of its own: it waits on nothing its
// callers pass.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Add locks its own mutex.
func (c *Counter) Add() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

// Log locks a package-level mutex: nothing its callers pass.
func Log(string) {
	logMu.Lock()
	defer logMu.Unlock()
}

var logMu sync.Mutex
