package runtime

import (
	"runtime/metrics"
	"slices"
	"sync"
)

// A stack snapshot is the costliest step of real-time quiescence, and a
// serial agent needs one per gate release: after the released call runs,
// the agent parks at its next gate. The snapshot can be skipped when the
// answer is already known: the last snapshot found the scenario quiet, no
// goroutine was created in the process since (runtime/metrics counts
// them), and every goroutine the scenario had then, and every older one
// that reached a gate, is parked at a gate now. Nothing that could act is
// then unseen: a new goroutine changes the count, and a goroutine at a gate
// only moves when the scheduler releases it.
//
// The goroutines the harness itself starts for a scheduled run (the one
// that delivers the invocations, and each invocation's own) need no
// snapshot either: each is started under the world's lock and counted
// (made), and each says when it can no longer act by itself: blocked until
// an invocation that has not returned returns (waiting), ended (exits),
// or an invocation's goroutine that returned (rootsDone); an invocation's
// goroutine parked at a gate is seen in the scheduler's list. When the
// process created exactly as many goroutines since the last quiet
// snapshot as the harness did, no other goroutine was created, so that the
// scenario's goroutines are those of the snapshot and the harness's; the
// scenario is quiet when those of the snapshot are parked at gates and
// every one of the harness's is parked or can no longer act. The world is
// quiet with no goroutine of its own when it is taken (newWorld), so the
// first check of a scheduled run and the one after its last delivery
// returned take no snapshot either, unless something else started a
// goroutine meanwhile (Setup, the agent, another test).

// createdSamples read the process's count of goroutines created.
var createdSamples = sync.Pool{New: func() any {
	return &[]metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
}}

// goroutinesCreated returns how many goroutines the process has created,
// and false where runtime/metrics does not say.
func goroutinesCreated() (uint64, bool) {
	sp := createdSamples.Get().(*[]metrics.Sample)
	defer createdSamples.Put(sp)
	metrics.Read(*sp)
	if v := (*sp)[0].Value; v.Kind() == metrics.KindUint64 {
		return v.Uint64(), true
	}
	return 0, false
}

// noteQuiet records what a snapshot that found the scenario quiet saw: its
// goroutines, and the count of created goroutines and of those the
// harness made, read together before the snapshot was taken.
func (w *world) noteQuiet(ours []gInfo, created uint64, made int, known bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !known {
		w.quietSet = nil
		return
	}
	w.quietSet = w.quietSet[:0]
	for _, g := range ours {
		// The harness waiting for the agent (a delivery blocked until its
		// invocation returns) wakes only when an invocation goroutine
		// ends, which is then not at a gate.
		if g.harnessWait() {
			continue
		}
		w.quietSet = append(w.quietSet, g.id)
	}
	if w.quietSet == nil {
		w.quietSet = []uint64{}
	}
	w.quietCreated, w.quietMade = created, made
}

// quietAtGates reports whether the scenario is known quiet without a
// snapshot: see the comment at the top of this file. parked holds the
// goroutines registered at a gate, read before the count.
func (w *world) quietAtGates(parked gids) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	// Under w.mu no goroutine of the harness is being started: made and
	// the count agree.
	created, ok := goroutinesCreated()
	if !ok || w.quietSet == nil {
		return false
	}
	for id := range w.visitor {
		if !parked.has(id) {
			return false
		}
	}
	if created == w.quietCreated && allParked(w.quietSet, parked) {
		return true
	}
	if !w.counted || created-w.quietCreated != uint64(w.made-w.quietMade) {
		return false // a goroutine the harness did not start
	}
	for _, id := range w.quietSet {
		if _, root := w.roots.get(id); !root && !parked.has(id) {
			return false
		}
	}
	settled := w.waiting + w.exits + w.rootsDone
	for id := range w.roots.all {
		if parked.has(id) {
			settled++
		}
	}
	return settled == w.made
}

func allParked(ids []uint64, parked gids) bool {
	for _, id := range ids {
		if !parked.has(id) {
			return false
		}
	}
	return true
}

// start runs fn in a goroutine of the harness, counted in made, which
// counts as ended once fn returned, and then closes done if not nil.
func (w *world) start(fn func(), done chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	goHarness(func() {
		if done != nil {
			defer close(done)
		}
		defer w.exited()
		fn()
	})
	w.made++
}

// exited counts a goroutine of the harness that ended.
func (w *world) exited() {
	w.mu.Lock()
	w.exits++
	w.mu.Unlock()
}

// startRoot runs fn, an invocation's own goroutine, counted in made.
func (w *world) startRoot(fn func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	goInvocation(fn)
	w.made++
}

// spawn runs fn in a goroutine of the harness that the quiet accounting
// leaves out (a concurrent delivery's, which only waits for its
// invocation), counted in spawned.
func (w *world) spawn(fn func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	goHarness(fn)
	w.spawned++
}

// createdCount returns how many goroutines the process has created and
// how many of them the harness started through w (made and spawned), read
// together: under w.mu none of the harness's is being started. Between two
// readings, the first count growing more than the second says that a
// goroutine other than the harness's was created (invocation.cancelled).
func (w *world) createdCount() (created uint64, harness int, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	created, ok = goroutinesCreated()
	return created, w.made + w.spawned, ok
}

// await says the calling goroutine (of the harness) blocks until inv
// returns; awoken that it no longer does.
func (w *world) await(inv *invocation) {
	w.mu.Lock()
	if !inv.finished {
		inv.awaited = true
		w.waiting++
	}
	w.mu.Unlock()
}

func (w *world) awoken(inv *invocation) {
	w.mu.Lock()
	if inv.awaited {
		inv.awaited = false
		w.waiting--
	}
	w.mu.Unlock()
}

// returned says inv's own goroutine returned: it can no longer act, and
// the goroutine waiting for it wakes.
func (w *world) returned(inv *invocation) {
	w.mu.Lock()
	inv.finished = true
	w.rootsDone++
	if inv.awaited {
		inv.awaited = false
		w.waiting--
	}
	w.mu.Unlock()
}

// parked appends to buf the goroutines registered at the scheduler's
// gates. They were a map made for each look (realtimeQuiesce), its seed
// drawn from the random source: 88 of the 3,427 allocations of the
// ten-write suite under TestAgent, and realtimeQuiesce 0.07 s of a CPU
// profile of 3,000 such suites where it is 0.02 s now (GOMAXPROCS=1;
// docs/performance.md, fifteenth sitting). A scenario parks a few calls
// at its gates, and the list is searched in turn (gids.has); appended to
// an array on the caller's stack, it allocates nothing.
func (s *scheduler) parked(buf gids) gids {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.waiting {
		if w.gid != 0 {
			buf = append(buf, w.gid)
		}
	}
	return buf
}

// gids lists goroutine ids, a set as far as has tells.
type gids []uint64

// has reports whether id is listed.
func (g gids) has(id uint64) bool {
	return slices.Contains(g, id)
}
