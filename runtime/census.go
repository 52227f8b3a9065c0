package runtime

import (
	"maps"
	"sync"
	"time"
)

// A scenario with gates needs every goroutine that existed before it
// (newWorld), and a stack dump of the process is the only way to list
// them: it stops the world and formats every goroutine's stack, about 60
// µs with GOMAXPROCS=1 and 110 µs with 2 on a test binary's fifteen
// goroutines (BenchmarkGoroutinesBefore), the costliest step of a short
// scenario. Between two such scenarios of a suite, most agents start
// no goroutine: the only goroutines created are the harness's own (a
// hook's, an invocation's, a delivery's), and each has ended. The goroutines
// there then are those of the last dump, less some that ended, and the
// dump can be reused.
//
// census keeps the last dump with what tells that: the count of goroutines
// the process had created (runtime/metrics) and of those the harness had
// started (goHarness), read together under mu before the dump, and how
// many of the harness's started since have ended. The dump stands for the
// process's goroutines while the process created exactly as many
// goroutines as the harness started since, and all of those ended: then
// no goroutine was created that the dump does not list. It stands too
// with one more created, when the goroutine asking is not in the dump:
// that one is the goroutine created since (go test's for the next test,
// whose suite asks), and the dump with it lists them all. Goroutine ids are
// never reused, so a listed one that ended since is never taken for a new
// one. Anything else (Setup starting a server, the agent a worker, another
// test running in parallel, a context.AfterFunc callback) changes the
// first count alone, and the next scenario dumps again.
var census struct {
	mu      sync.Mutex
	started uint64          // goroutines the harness started, ever
	ids     map[uint64]bool // the last dump's goroutines; nil before the first
	created uint64          // the process's count of created goroutines then
	base    uint64          // started then
	ended   uint64          // of those started since base, how many ended
	dumps   uint64          // dumps taken, ever
	// adopted counts the goroutines listed since the dump without one
	// (the tests' own goroutines, HarnessAside's): see maxAdopted.
	adopted int
	// settled, when not nil, is closed once every goroutine the harness
	// started since base has ended (goroutinesBefore waits on it).
	settled chan struct{}
}

// endGrace bounds how long goroutinesBefore waits for the harness's
// goroutines to end before it dumps the stacks instead. One signals its
// end (closes a channel, sends a result) just before it ends, and the
// harness may read the signal first; on a loaded machine the thread
// running it can be descheduled for a few milliseconds right there (the
// stop-the-world of a dump would wait for it as well). A goroutine of the
// harness still running for longer (an agent abandoned after a stall) is
// rare.
var endGrace = 5 * time.Millisecond

// maxAdopted bounds the goroutines the last dump takes in without a new
// one: the goroutine go test started for each test whose suite asks, and
// each HarnessAside goroutine. Goroutine ids are never reused, so an id
// listed stays right after its goroutine ended, but it stays in the list:
// with every test of a binary taken in, the list grew by one a test, and
// each scenario run under gates copies it twice (goroutinesBefore,
// world.stillBefore). After 3,600 suites in one test binary
// (TestMeasureSuite, 300 rounds), copying it was most of the ten-write
// suite's baseline under TestAgent (215 µs, against 66 µs under
// runtime.Run alone, one goroutine, GOMAXPROCS=1). Past the bound the census dumps again, and the new dump lists
// only the goroutines still alive: one stop of the world every
// maxAdopted tests, instead of a copy that grows with every test.
const maxAdopted = 32

// goHarness runs fn in a goroutine of the harness, counted in the census.
func goHarness(fn func()) { startCounted(fn, false) }

// goInvocation is goHarness for an invocation's own goroutine, whose stack
// it grows first thing (growStack), from the goroutine's first frame: from
// the invocation's (recorder.invokeNumbered), a closure of many defers,
// the copy read that frame's tables too.
func goInvocation(fn func()) { startCounted(fn, true) }

func startCounted(fn func(), grow bool) {
	census.mu.Lock()
	census.started++
	seq := census.started
	go func() {
		if grow {
			growStack()
		}
		defer harnessEnded(seq)
		fn()
	}()
	census.mu.Unlock()
}

// HarnessAside runs fn in a goroutine of the harness while the caller goes
// on: a goroutine that calls no tool and waits at no gate (testkit opens a
// suite's report file in it while the suite runs: making a file took 0.2
// to 0.6 ms on this project's machine, about half of the ten-write suite). The
// scenarios run under gates take it for one that was there before them:
// it neither has them dump the stacks of the process again nor waits to
// end before they start. Where goroutine ids cannot be read (goroutineID),
// fn runs in the caller's goroutine before HarnessAside returns.
func HarnessAside(fn func()) {
	if goroutineID() == 0 {
		fn()
		return
	}
	census.mu.Lock()
	census.started++
	seq := census.started
	go func() {
		// Listed with the last dump's goroutines, and counted as one of
		// the harness's that ended: the census stands. A dump taken
		// since it started lists it anyway.
		census.mu.Lock()
		if census.ids != nil && seq > census.base {
			census.ids[goroutineID()] = true
			census.adopted++
		}
		endedLocked(seq)
		census.mu.Unlock()
		fn()
	}()
	census.mu.Unlock()
}

// harnessEnded counts the end of the harness's goroutine seq.
func harnessEnded(seq uint64) {
	census.mu.Lock()
	endedLocked(seq)
	census.mu.Unlock()
}

// endedLocked is harnessEnded with census.mu held.
func endedLocked(seq uint64) {
	if census.ids != nil && seq > census.base {
		census.ended++
		if census.settled != nil && census.ended == census.started-census.base {
			close(census.settled)
			census.settled = nil
		}
	}
}

// goroutinesBefore returns the id of every goroutine of the process, and
// the count of created goroutines read before they were listed (false when
// runtime/metrics does not say): the last dump's when it still stands,
// else a new one's.
func goroutinesBefore() (ids map[uint64]bool, created uint64, known bool) {
	for tries := 0; ; tries++ {
		census.mu.Lock()
		created, known = goroutinesCreated()
		since := census.started - census.base
		if !known || census.ids == nil {
			break
		}
		// The calling goroutine, when the dump does not list it, was
		// created since: the goroutine go test starts for each test, whose
		// suite this is.
		self := goroutineID()
		newSelf := self != 0 && !census.ids[self]
		if n := created - census.created; n != since && !(newSelf && n == since+1) {
			break // someone else created a goroutine: a new dump
		}
		if census.ended == since {
			if newSelf && created-census.created == since+1 {
				if census.adopted >= maxAdopted {
					break // a new dump, which lists only those still alive
				}
				census.adopted++
				// The dump takes in the one goroutine created since that
				// the harness did not start: go test's for this test.
				// Then the next test's is again the only one; counted
				// both, every suite of a test after the first dumped.
				census.ids[self] = true
				census.created++
			}
			ids = maps.Clone(census.ids)
			if newSelf {
				ids[self] = true
			}
			census.mu.Unlock()
			return ids, created, true
		}
		// A goroutine of the harness signals its end just before it ends:
		// wait for it (endGrace) before paying for a dump.
		if tries > 0 {
			break // not within endGrace
		}
		if census.settled == nil {
			census.settled = make(chan struct{})
		}
		settled := census.settled
		census.mu.Unlock()
		grace := time.NewTimer(endGrace)
		select {
		case <-settled:
		case <-grace.C:
		}
		grace.Stop()
	}
	defer census.mu.Unlock()
	// Under mu, the harness starts no goroutine while the dump is taken.
	created, known = goroutinesCreated()
	ids = map[uint64]bool{}
	goroutineIDs(ids)
	census.dumps++
	if known {
		census.ids = maps.Clone(ids)
		census.created, census.base, census.ended = created, census.started, 0
		census.adopted = 0
		if census.settled != nil {
			close(census.settled) // whoever waits finds this dump
			census.settled = nil
		}
	} else {
		census.ids = nil
	}
	return ids, created, known
}

// HarnessGoroutines runs run, which starts n goroutines and returns once
// they have ended, as testing.T.Run does for a subtest (one goroutine
// each, which has signalled its end when Run returns): testkit makes the
// subtests of a suite's failing scenarios, after the suite ran, this way.
// When the process created exactly n goroutines while run ran, and took no
// stack dump meanwhile, they count as the harness's and as ended: the next
// scenario run under gates (the next suite's baseline) need not dump the
// stacks of the process again for them. Otherwise nothing is counted, and
// it does.
func HarnessGoroutines(n int, run func()) {
	census.mu.Lock()
	before, ok := goroutinesCreated()
	dumps := census.dumps
	census.mu.Unlock()
	run()
	census.mu.Lock()
	defer census.mu.Unlock()
	after, ok2 := goroutinesCreated()
	if !ok || !ok2 || n < 0 || census.ids == nil || census.dumps != dumps || after-before != uint64(n) {
		return
	}
	census.started += uint64(n)
	census.ended += uint64(n)
}
