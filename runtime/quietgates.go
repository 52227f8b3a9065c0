package runtime

import (
	"runtime/metrics"
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
// goroutines, and the count of created goroutines read before the
// snapshot was taken.
func (w *world) noteQuiet(ours []gInfo, created uint64, known bool) {
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
	w.quietCreated = created
}

// quietAtGates reports whether the scenario is known quiet without a
// snapshot: see the comment at the top of this file. parked holds the
// goroutines registered at a gate, read before the count.
func (w *world) quietAtGates(parked map[uint64]bool) bool {
	created, ok := goroutinesCreated()
	if !ok {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.quietSet == nil || created != w.quietCreated {
		return false
	}
	for _, id := range w.quietSet {
		if !parked[id] {
			return false
		}
	}
	for id := range w.visitor {
		if !parked[id] {
			return false
		}
	}
	return true
}

// parked returns the goroutines registered at the scheduler's gates.
func (s *scheduler) parked() map[uint64]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[uint64]bool, len(s.waiting))
	for _, w := range s.waiting {
		if w.gid != 0 {
			out[w.gid] = true
		}
	}
	return out
}
