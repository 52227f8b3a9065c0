package runtime

import "sync"

// A call whose context carries no run is attributed by the goroutine that
// made it, and every invocation's goroutine registers its id: most
// scenarios need a goroutine id per invocation, and a context-less tool
// one per call. The only portable way to read it is the header of a
// traceback (runtime.Stack), which costs a few µs on the invocation's
// shallow stack and tens on a test's deep one: a fifth of a small suite's
// time went there.
//
// Where the goroutine descriptor (the runtime's g) can be reached from
// assembly (amd64, arm64), the id is read off it instead. Its offset in g
// is not part of any API and changes between Go releases, so it is not
// assumed: at the first use, the id each of several goroutines reads from
// its traceback is looked for among the first words of its g, and the
// offset is used only if exactly one word holds the id in every one of
// them. Otherwise, or on another architecture, goroutineID reads the
// traceback as before. goid_test.go checks the two agree.

// goidOffset is the offset of the goroutine id in g, or 0: unknown.
var (
	goidOnce   sync.Once
	goidOffset uintptr
)

// goidSearch bounds the search: the id sits well within g's first words
// (about 160 bytes in from Go 1.20 to 1.26), and g is larger than this.
const goidSearch = 256

// goroutineID returns the calling goroutine's id.
func goroutineID() uint64 {
	goidOnce.Do(findGoidOffset)
	if goidOffset != 0 {
		return goidAt(goidOffset)
	}
	return stackGoroutineID()
}

// findGoidOffset sets goidOffset when exactly one word of g holds the
// goroutine id in the calling goroutine and in four others.
func findGoidOffset() {
	if !haveGoidAt {
		return
	}
	matches := func() []uintptr {
		id := stackGoroutineID()
		var at []uintptr
		for off := uintptr(8); off < goidSearch; off += 8 {
			if goidAt(off) == id {
				at = append(at, off)
			}
		}
		return at
	}
	found := map[uintptr]int{}
	for _, off := range matches() {
		found[off]++
	}
	const others = 4
	results := make(chan []uintptr, others)
	for range others {
		go func() { results <- matches() }()
	}
	for range others {
		for _, off := range <-results {
			found[off]++
		}
	}
	var offset uintptr
	for off, n := range found {
		if n == others+1 {
			if offset != 0 {
				return // two candidates: trust neither
			}
			offset = off
		}
	}
	goidOffset = offset
}
