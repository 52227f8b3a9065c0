package runtime

import (
	"os"
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A suite's scenarios allocate their calls, traces and results, most of a
// megabyte for an agent of ten writes, and keep only what the report
// holds. In a test binary, whose live heap is a megabyte or two, the
// collector's default pacing (GOGC=100: a collection when the heap reaches
// twice its live size, and at least 4 MB) then collects every few suites,
// and the collections (their marking, the write barriers they turn on, the
// pages the scavenger gives back to the system between them, which the
// next scenarios fault back in) took a quarter of the ten-write suite's
// time (scripts/bench/suite.sh with GOGCS="default collector").
//
// So while suites run, the collector gets headroom: the heap may grow
// gcHeadroom past its live size before a collection, where GOGC=100 lets a
// small heap grow to 4 MB in all. The first suite to start sets the GOGC
// percent that does it (debug.SetGCPercent), from the live heap then. When
// the last suite running reports, the percent goes back after the next
// collection (a cleanup that collection runs): back at once, with the
// heap above the default goal, it would start a collection then and there,
// one per suite, when suites follow one another, as a test binary's do.
// The headroom then outlasts the suites by at most one collection.
//
// 16 MB. Against 8 MB (the choice before), the ten-write suite under
// TestAgent took 896 against 976 us with GOMAXPROCS=1 and 1156 against
// 1261 with 2 (scripts/bench/suite.sh, BEFORE=b91d8aa ROUNDS=5, medians),
// and BenchmarkSuite/writes=10 6% and 11% less (8 alternated runs); 24 MB
// was no faster. The stop that chose 8 MB had measured the suites of small
// agents a fifth slower with 16: in 6 alternated runs of TestMeasureSuite
// with GOMAXPROCS=1 the naive refund agent's suites (seven scenarios, the
// first agent the test runs) took 5 to 8% longer, the keyed refund agent's
// (the second) as long, the ten-write agent's 3 to 6% less, and the whole
// run 9% less CPU with fewer page faults (perf stat); with 400 suites of
// each, the naive agent's took as long with 8 and 16 MB, which fits a cost
// paid once per process (the first suites fault the larger heap in).
// BenchmarkSuite/writes=1, alternated ten times, was as fast with 8, 12
// and 16 MB.
//
// The collector is left alone when GOGC is set in the environment, when
// AGENTIDEM_GC=default, and when the program set a percent of its own
// (debug.SetGCPercent): a percent the program sets while suites run is
// kept as well.
const gcHeadroom = 16 << 20

var gcPace struct {
	mu      sync.Mutex
	suites  int  // suites running
	set     int  // the percent set, 0 when the collector has its own
	restore int  // the percent set replaced
	armed   bool // a cleanup will restore it after the next collection
	live    []metrics.Sample
}

// setGCPercent is debug.SetGCPercent; tests replace it.
var setGCPercent = debug.SetGCPercent

// gcPaceUp counts a suite that starts running; the first one gives the
// collector its headroom.
func gcPaceUp() {
	gcPace.mu.Lock()
	defer gcPace.mu.Unlock()
	gcPace.suites++
	if gcPace.suites > 1 || gcPace.set != 0 {
		return // given already, and not restored yet
	}
	if _, set := os.LookupEnv("GOGC"); set || os.Getenv("AGENTIDEM_GC") == "default" {
		return
	}
	want := gcPercentFor(liveHeap())
	if want <= 100 {
		return
	}
	if old := setGCPercent(want); old != 100 {
		setGCPercent(old) // the program's own: keep it
		return
	}
	gcPace.set, gcPace.restore = want, 100
}

// gcPaceDown counts a suite that reported; after the last one, the next
// collection restores the percent.
func gcPaceDown() {
	gcPace.mu.Lock()
	defer gcPace.mu.Unlock()
	gcPace.suites--
	if gcPace.suites > 0 || gcPace.set == 0 || gcPace.armed {
		return
	}
	gcPace.armed = true
	// Not a tiny object (it holds a pointer), whose cleanup would wait for
	// the objects it shares a block with.
	sentinel := &struct{ _ *byte }{}
	goruntime.AddCleanup(sentinel, func(struct{}) { gcPaceRestore() }, struct{}{})
}

// gcPaceRestore gives the collector its percent back, unless a suite runs
// again.
func gcPaceRestore() {
	gcPace.mu.Lock()
	defer gcPace.mu.Unlock()
	gcPace.armed = false
	if gcPace.suites > 0 || gcPace.set == 0 {
		return
	}
	if now := setGCPercent(gcPace.restore); now != gcPace.set {
		setGCPercent(now) // the program's, set while the suites ran
	}
	gcPace.set = 0
}

// gcPercentFor returns the GOGC percent that lets a heap of live bytes grow
// gcHeadroom before a collection, at least 100. GOGC scales the minimum
// heap (4 MB at 100) as well as the growth: a heap under 4 MB is paced as
// one of 4 MB.
func gcPercentFor(live uint64) int {
	const minHeap = 4 << 20
	live = max(live, minHeap)
	return max(100, int(100*gcHeadroom/live))
}

// liveHeap reads the bytes the last collection found live; 0 when the
// runtime does not say.
func liveHeap() uint64 {
	if gcPace.live == nil {
		gcPace.live = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	}
	metrics.Read(gcPace.live)
	if v := gcPace.live[0].Value; v.Kind() == metrics.KindUint64 {
		return v.Uint64()
	}
	return 0
}
