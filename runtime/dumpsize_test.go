package runtime

import (
	"sync"
	"testing"
)

// A snapshot of a process whose stacks fill more than a new buffer takes
// one dump, not one per doubling of the buffer, once a dump needed that
// much: after a collection emptied the pool too.
func TestSnapshotOfManyGoroutinesTakesOneDump(t *testing.T) {
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 2000 { // about 300 KB of dump: past 64 KB and its first doublings
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
		}()
	}
	defer func() {
		close(release)
		wg.Wait()
	}()
	dumps := countDumps(t)
	eachGoroutine(func([]byte) {}) // learns the size, in as many dumps as it takes
	first := dumps()
	if first < 2 {
		t.Fatalf("the first snapshot took %d dump(s); the test needs a dump larger than a new buffer", first)
	}
	for i := range 3 {
		switch i {
		case 0, 1: // emptied, as by a collection
			stackBufs = sync.Pool{New: stackBufs.New}
		case 2: // holding a buffer made before the dump needed more
			small := make([]byte, 1<<16)
			stackBufs = sync.Pool{New: stackBufs.New}
			stackBufs.Put(&small)
		}
		before := dumps()
		ids := 0
		eachGoroutine(func(block []byte) {
			if id, _ := headerIDs(block); id != 0 {
				ids++
			}
		})
		if n := dumps() - before; n != 1 {
			t.Errorf("a snapshot from an emptied pool took %d dumps, want 1 (the first took %d)", n, first)
		}
		if ids < 2000 {
			t.Errorf("the snapshot saw %d goroutines, want at least the 2000 started", ids)
		}
	}
}
