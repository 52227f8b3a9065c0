package runtime

import (
	"fmt"
	"sync"
	"time"
)

// Point is where a gated call waits: before the tool runs, or after it
// returned and before the agent sees the answer.
type Point uint8

const (
	// PointStart is before the tool runs.
	PointStart Point = iota + 1
	// PointFinish is after the tool returned.
	PointFinish
)

// Gate decides when gated calls proceed. A scheduler implements it; Wait
// blocks the calling goroutine until the scheduler releases c at point p.
type Gate interface {
	Wait(c *Call, p Point)
}

// lockstep is the gate of concurrent duplicate delivery: the k-th tool call
// of one delivery starts only when every other delivery has reached its k-th
// call or returned. Both deliveries read before either writes, which is the
// interleaving that breaks check-then-act.
//
// It runs on real time. A delivery that waits too long makes it look for a
// goroutine stuck on a sync.Mutex (a lock shared by both deliveries and held
// across a tool call): then it stops gating and reports the hazard instead of
// deadlocking.
type lockstep struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	n       int
	arrived map[int]int
	done    map[int]bool
	bypass  bool
	hazard  string
}

func newLockstep(n int) *lockstep {
	return &lockstep{n: n, arrived: map[int]int{}, done: map[int]bool{}, changed: make(chan struct{})}
}

// changedLocked wakes every waiter.
func (l *lockstep) changedLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *lockstep) Wait(c *Call, p Point) {
	if p != PointStart {
		return
	}
	inv := c.inv.n
	l.mu.Lock()
	defer l.mu.Unlock()
	l.arrived[inv]++
	k := l.arrived[inv]
	l.changedLocked()
	for !l.bypass && !l.ready(inv, k) {
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
			l.mu.Lock()
		case <-time.After(20 * time.Millisecond):
			blocked := mutexBlocked()
			l.mu.Lock()
			if blocked != "" && !l.bypass && !l.ready(inv, k) {
				l.bypass = true
				l.hazard = fmt.Sprintf("concurrent delivery stalled: delivery %d waited at %s for the other delivery, which is blocked on a sync.Mutex held across a tool call (a lock shared by both deliveries serializes them behind the scheduler's back); release locks before calling tools:\n%s", inv, c.op.Name, blocked)
				l.changedLocked()
			}
		}
	}
}

func (l *lockstep) ready(inv, k int) bool {
	for j := 1; j <= l.n; j++ {
		if j != inv && !l.done[j] && l.arrived[j] < k {
			return false
		}
	}
	return true
}

// finish marks delivery inv as returned.
func (l *lockstep) finish(inv int) {
	l.mu.Lock()
	l.done[inv] = true
	l.changedLocked()
	l.mu.Unlock()
}
