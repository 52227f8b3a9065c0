package runtime

import "testing"

// TestQuietAtGates checks when a snapshot may be skipped: only while every
// goroutine of the last quiet snapshot, and every older goroutine that
// reached a gate, is parked at a gate and no goroutine was created since.
func TestQuietAtGates(t *testing.T) {
	w := newWorld(false)
	if w.quietAtGates(map[uint64]bool{1: true}) {
		t.Fatal("quiet without any snapshot")
	}
	created, ok := goroutinesCreated()
	if !ok {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	w.noteQuiet([]gInfo{{id: 1}, {id: 2}}, created, true)
	if !w.quietAtGates(map[uint64]bool{1: true, 2: true}) {
		t.Error("not quiet with every goroutine of the snapshot at a gate")
	}
	if w.quietAtGates(map[uint64]bool{1: true}) {
		t.Error("quiet while goroutine 2 is not at a gate")
	}
	w.visitor[7] = true
	if w.quietAtGates(map[uint64]bool{1: true, 2: true}) {
		t.Error("quiet while an older goroutine that reached a gate is not at one")
	}
	delete(w.visitor, 7)
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
	if w.quietAtGates(map[uint64]bool{1: true, 2: true}) {
		t.Error("quiet after a goroutine was created")
	}
	w.noteQuiet(nil, 0, false)
	if w.quietAtGates(map[uint64]bool{1: true, 2: true}) {
		t.Error("quiet after a snapshot that was not")
	}
}
