package runtime

import (
	"sync"
	"sync/atomic"
)

// GoInfrastructure runs f in a new goroutine that serves the process, not
// the agent: a backend's listening connection, a pool's reaper, a cache's
// refresher that a package of the toolkit (or any library) starts on its
// first use, which may be inside a tool call of a suite's scenario. The
// suite never takes that goroutine, nor the goroutines it starts while it
// runs, for the agent's: it is not waited for (a read of it is no reply
// the agent is owed), it is no goroutine the agent left running, and no
// stall report names it.
//
// Without it, such a goroutine started during a scenario is the
// scenario's, and one that reads the network for as long as it lives is
// waited for a second and noted as a loop the agent reads in, wherever
// its package's files are the user's code (a module replaced by a local
// copy, a workspace): idem/postgres's LISTEN connection cost every suite
// that used it a second and a note (red team, /tmp/rtM P6). An agent's own
// goroutines must not be started this way: what they do is what the suite
// tests.
//
// Outside a suite it is a plain go statement, but for recording the
// goroutine's id while f runs.
func GoInfrastructure(f func()) {
	go func() {
		id := goroutineID()
		infrastructure.Store(id, struct{}{})
		infrastructureRunning.Add(1)
		defer func() {
			infrastructure.Delete(id)
			infrastructureRunning.Add(-1)
		}()
		f()
	}()
}

// infrastructure holds the ids of the goroutines GoInfrastructure runs,
// while they run; infrastructureRunning counts them, so that a process
// that starts none pays one atomic load for each goroutine looked at.
var (
	infrastructure        sync.Map // uint64 → struct{}
	infrastructureRunning atomic.Int64
)

// isInfrastructure reports whether goroutine id is one GoInfrastructure
// runs.
func isInfrastructure(id uint64) bool {
	if infrastructureRunning.Load() == 0 {
		return false
	}
	_, ok := infrastructure.Load(id)
	return ok
}

// infrastructureLocked reports whether goroutine id is a goroutine
// GoInfrastructure runs, or descends from one by the parents w has
// learned (a connection's reader it started). w.mu is held.
func (w *world) infrastructureLocked(id uint64) bool {
	if infrastructureRunning.Load() == 0 {
		return false
	}
	for i := 0; i < 64 && id != 0; i++ {
		if isInfrastructure(id) {
			return true
		}
		id = w.parent[id]
	}
	return false
}
