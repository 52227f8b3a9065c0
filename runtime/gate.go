package runtime

import "sync"

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
type lockstep struct {
	mu      sync.Mutex
	cond    *sync.Cond
	n       int
	arrived map[int]int
	done    map[int]bool
}

func newLockstep(n int) *lockstep {
	l := &lockstep{n: n, arrived: map[int]int{}, done: map[int]bool{}}
	l.cond = sync.NewCond(&l.mu)
	return l
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
	l.cond.Broadcast()
	for !l.ready(inv, k) {
		l.cond.Wait()
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
	l.cond.Broadcast()
	l.mu.Unlock()
}
