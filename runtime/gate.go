package runtime

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
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
// It runs on real time. When a delivery waits and every goroutine of the
// scenario is parked at a gate or blocked (the other delivery waits on a
// channel semaphore, a singleflight, a lock the waiting delivery holds), the
// other delivery cannot arrive by itself: the lowest-numbered waiting
// delivery goes on alone, and the trace says so. The agent serialized its
// deliveries; that is its right, and the duplicate checks still judge what
// the two deliveries did.
//
// So it does when the other delivery stays busy outside any gate for
// aloneAfter while one waits: it may wait for a lock the waiting delivery
// holds in a way no snapshot tells from a slow answer, a lock service
// reached over HTTP (a long poll: waiting for network I/O, busy), or a
// lock polled with sleeps. A red team's agent (rtK, dlock) took such a
// lock before its first call: the delivery holding it waited at its gate
// for the other, which waited on the network for the lock, and every run
// stalled for 10 s. A slow answer does not cost the lockstep its
// interleaving: two deliveries released together wait for their answers
// together, and reach their next gates a moment apart, not aloneAfter.
// One answered later than the other's by more than aloneAfter, and read
// after that wait, does: the first delivery writes before the second
// reads (TestCheckThenBookOverHTTPStillCaught; with aloneAfter cut to
// 1 ms, a second find answered 300 ms after the first lost the duplicate).
//
// A delivery in its HTTP client's retry back-off (retryBackoffs) is
// asleep, not blocked: waited for, as one in time.Sleep. Taken for
// blocked, it let the other go on alone at once, and a check-then-book
// across two model turns passed against a rate-limited API (rtL, R3).
// When the back-off outlasts aloneAfter and the other goes on alone all
// the same, the world's rate limit, not the agent, ran the deliveries one
// after the other: the scenario is inconclusive (recorder.apart).
//
// A delivery inside a tool body (released at its start gate, not back at
// its finish) is neither at a gate nor blocked outside one: its body is
// recorded (world.body), counts as busy for bodyGrace, and, blocked in a
// select or a receive past that (a poll on a ticker, a worker's answer),
// is waited for up to aloneAfter; one still there after that goes the
// way of the back-off above: inconclusive (rtX #4).
type lockstep struct {
	rec     *recorder
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	n       int
	arrived map[int]int
	passed  map[int]int // delivery -> the call number it was let through alone
	done    map[int]bool
	waiting map[*Call]int // the calls at the gate, with their delivery
	nth     map[*Call]int // the calls at the gate, with their k
	bypass  bool
	began   time.Time
	moved   map[int]time.Time // delivery -> when it last reached or left a gate
	// outlasted: delivery -> its moved when another went on alone past
	// it (outsideLocked): not moved since, it is still in the wait that
	// outlasted aloneAfter once, and is not waited for again.
	outlasted map[int]time.Time
}

func newLockstep(n int) *lockstep {
	return &lockstep{n: n, arrived: map[int]int{}, passed: map[int]int{}, done: map[int]bool{}, waiting: map[*Call]int{}, nth: map[*Call]int{}, changed: make(chan struct{}),
		began: time.Now(), moved: map[int]time.Time{}, outlasted: map[int]time.Time{}}
}

// aloneAfter is how long the other deliveries must have stayed busy
// outside any gate before a waiting delivery goes on alone: readGrace
// (1 s), cut to half a stall bound shorter than two of it, the grace the
// suite gives a read of the agent's own that may never end.
func (l *lockstep) aloneAfter() time.Duration {
	return readGraceUnder(l.rec.world.stallAfter)
}

// outsideLocked reports whether every delivery but inv that has not
// returned and has no call at the gate has been outside any gate for
// aloneAfter while inv waited: since it last reached or left a gate (since
// the lockstep began, for one that has not reached a gate yet), and since
// inv's call reached the gate, at since. A slow answer that the other
// delivery waited for while inv ran up to its gate is not held against it:
// two deliveries released together and answered 700 ms later reached
// their next gates a moment apart, but, counted from its release, the
// later one had been outside for longer than aloneAfter, and the earlier
// went on alone at once (TestCheckThenBookOverHTTPStillCaught). A
// delivery still in a wait that outlasted aloneAfter once is not waited
// for again: the lock service's holder goes on alone at each of its calls
// after the first at once. It marks the deliveries it counted when it
// reports true.
func (l *lockstep) outsideLocked(inv int, since time.Time) bool {
	var counted []int
	for j := 1; j <= l.n; j++ {
		if j == inv || l.done[j] || l.atGateLocked(j) {
			continue
		}
		at, ok := l.moved[j]
		if !ok {
			at = l.began
		}
		counted = append(counted, j)
		if o, ok := l.outlasted[j]; ok && o.Equal(at) {
			continue
		}
		if time.Since(later(at, since)) < l.aloneAfter() {
			return false
		}
	}
	if len(counted) == 0 {
		return false
	}
	for _, j := range counted {
		at, ok := l.moved[j]
		if !ok {
			at = l.began
		}
		l.outlasted[j] = at
	}
	return true
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// atGateLocked reports whether a call of delivery j waits at the gate.
func (l *lockstep) atGateLocked(j int) bool {
	for _, d := range l.waiting {
		if d == j {
			return true
		}
	}
	return false
}

// world is the scenario's goroutines, or nil when none are read.
func (l *lockstep) world() *world {
	if l.rec == nil {
		return nil
	}
	return l.rec.world
}

// changedLocked wakes every waiter.
func (l *lockstep) changedLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *lockstep) Wait(c *Call, p Point) {
	w := l.world()
	if p != PointStart {
		if w != nil {
			w.body(c.bodyGoroutine(), false) // its tool body returned
		}
		return
	}
	inv := c.inv.n
	l.mu.Lock()
	defer l.mu.Unlock()
	l.arrived[inv]++
	k := l.arrived[inv]
	l.waiting[c] = inv // a delivery may have several calls waiting (parallel calls)
	l.nth[c] = k
	l.moved[inv] = time.Now()
	defer func() {
		l.moved[inv] = time.Now()
		delete(l.waiting, c)
		delete(l.nth, c)
		l.rec.number(c) // let through by bypass: numbered now
		if w != nil {
			// Its tool body runs from now: blocked, it counts as busy
			// for bodyGrace (gInfo.busy), as under the scheduler. Not
			// recorded, a body's wait for a ticker's next tick on the
			// invocation's own goroutine (a poll) was quiet at once,
			// and the other delivery, arrived at its next call, went
			// on alone: a check-then-act after the poll passed (red
			// team rtX #4).
			w.body(c.bodyGoroutine(), true)
		}
	}()
	l.changedLocked()
	l.numberReadyLocked()
	arrivedAt := time.Now()
	poll := 100 * time.Microsecond
	// One timer for the wait's polls, reset each round, where time.After
	// made one each time the other delivery moved (11 allocations of the
	// ten-write suite's concurrent delivery).
	var pollTimer *time.Timer
	for !l.bypass && !l.ready(inv, k) {
		ch := l.changed
		held := heldAtGates(func(yield func(*Call) bool) {
			for c := range l.waiting {
				if !yield(c) {
					return
				}
			}
		})
		l.mu.Unlock()
		if pollTimer == nil {
			pollTimer = time.NewTimer(poll)
		} else {
			pollTimer.Reset(poll)
		}
		select {
		case <-ch:
			l.mu.Lock()
			continue
		case <-pollTimer.C:
		}
		poll = min(2*poll, 5*time.Millisecond)
		quiet := l.rec != nil && l.rec.world != nil
		self := uint64(0)
		outlasted := time.Duration(0)
		if quiet {
			self = goroutineID()
			quiet, _, _ = l.rec.world.quiet(self, held)
			if quiet && l.rec.world.invocationOf(self) != 0 && l.rec.world.deliverySettling(self) {
				// Another delivery runs the suite's own Settle around
				// its call (a SettleUntil polling on a timer while a
				// booking lands), and this call is a delivery's own,
				// not a worker's made with a delivery's context, which
				// the Settle may be waiting for
				// (TestWorkerCallInsideARequestDoesNotSettleItself):
				// the harness's wait, not the agent's, bounded by the
				// Settle's own bound.
				// Taken for the agent's body waiting on a timer, the
				// other delivery went on alone after aloneAfter, and a
				// correct agent's concurrent delivery was inconclusive
				// in 8 runs of 11, its note blaming the agent (red team
				// rR #7). Waited for, the clock of the wait restarted.
				l.mu.Lock()
				arrivedAt = time.Now()
				continue
			}
			if !quiet {
				l.mu.Lock()
				if l.lowestWaiting() == inv && l.outsideLocked(inv, arrivedAt) {
					quiet, outlasted = true, l.aloneAfter()
				}
				l.mu.Unlock()
			}
		}
		var blocked []string
		var backoff map[int]string
		var bodies map[int]bodyWaiting
		var locked map[int]bool
		if quiet {
			bodies = l.rec.world.waitingBodies(self)
			locked = l.rec.world.onLock(self)
			blocked = l.rec.world.blocked(self)
			backoff = l.rec.world.backingOff(self)
		}
		l.mu.Lock()
		if quiet && !l.bypass && !l.ready(inv, k) && l.lowestWaiting() == inv {
			// A delivery inside a tool body, blocked in a select or a
			// receive past bodyGrace, most likely waits for a ticker, a
			// timer or a worker (a poll on a ticker its client made):
			// it is waited for up to aloneAfter from this call's
			// arrival, as one busy outside any gate is. One still
			// there after that lets this delivery go on alone, and
			// then the harness, not the agent's lock, ran the
			// deliveries one after the other: the scenario is
			// inconclusive (rtX #4).
			var inBody []string
			wait := false
			for j := 1; j <= l.n; j++ {
				b, ok := bodies[j]
				if !ok || j == inv || l.done[j] || l.atGateLocked(j) {
					continue
				}
				inBody = append(inBody, fmt.Sprintf("delivery %d was still inside a tool call after %s, its body %s", j, time.Since(b.since).Round(time.Millisecond), b.where))
				if o, ok := l.outlasted[j]; !ok || !o.Equal(l.moved[j]) {
					wait = true // not in a wait that outlasted aloneAfter once
				}
			}
			if wait && time.Since(arrivedAt) < l.aloneAfter() {
				continue
			}
			for j := range bodies {
				if j != inv && !l.done[j] && !l.atGateLocked(j) {
					l.outlasted[j] = l.moved[j]
				}
			}
			l.passed[inv] = k
			others := "the other delivery was blocked outside any gate"
			if outlasted > 0 {
				others = fmt.Sprintf("the other delivery was still busy outside any gate after %s, as one waiting for a lock this delivery holds is when the lock is a service's reached over the network or one polled with sleeps, which no stack tells from a slow answer", outlasted)
			}
			if len(inBody) > 0 {
				others = strings.Join(inBody, "; ") + ", waiting for what the stack does not show (a ticker's or a timer's channel, a worker's answer)"
			} else if len(blocked) > 0 {
				others += " (" + strings.Join(blocked, "; ") + ")"
			}
			then := "so the deliveries ran one after the other there"
			if strings.Contains(others, singleflightNote) { // syncwaits.go
				then = "so the other delivery shared this one's call there, through singleflight: the deliveries did not run it one after the other, and one execution served both"
			}
			note := fmt.Sprintf("concurrent delivery: delivery %d went on alone at its call %d (%s): %s, %s", inv, k, c.op.Name, others, then)
			unlocked := false // another delivery on its way, on no lock
			for j := 1; j <= l.n; j++ {
				if j != inv && !l.done[j] && !l.atGateLocked(j) && !locked[j] {
					unlocked = true
				}
			}
			if unlocked && len(inBody) == 0 {
				// Said in the report's notes as well (aloneNote).
				note += "; " + notOnLock
			}
			if len(inBody) > 0 {
				note += ": the harness let it go, not a lock of the agent's, so this scenario did not test the deliveries at once and proves nothing of what only two deliveries at once do (a check-then-act)"
				l.rec.mu.Lock()
				l.rec.apart = true
				l.rec.mu.Unlock()
			}
			// A delivery in its API client's retry back-off waits for
			// the world's rate limit, not for a lock this one holds:
			// the agent did not serialize its deliveries, the world
			// did, and the one scenario that could show what only two
			// deliveries at once do (check-then-act) did not run them
			// at once. Inconclusive (rtL, R3). busy counts the back-off
			// as asleep, so this is a back-off that outlasted
			// aloneAfter; a shorter one is waited for.
			var apart []string
			for j := 1; j <= l.n; j++ {
				if where, ok := backoff[j]; ok && j != inv && !l.done[j] && !l.atGateLocked(j) {
					apart = append(apart, fmt.Sprintf("delivery %d was in its API client's retry back-off at %s", j, where))
				}
			}
			if len(apart) > 0 {
				note += "; " + strings.Join(apart, "; ") + ": it waited for the world's rate limit, not for a lock this delivery holds, so this scenario did not test the deliveries at once and proves nothing of what only two deliveries at once do (a check-then-act)"
				l.rec.mu.Lock()
				l.rec.apart = true
				l.rec.mu.Unlock()
			}
			l.rec.addNote(note)
			l.changedLocked()
			l.numberReadyLocked()
		}
	}
	if pollTimer != nil {
		pollTimer.Stop()
	}
}

// numberReadyLocked numbers the waiting calls that may go, by their k,
// then their delivery: the calls the deliveries make in step get the same
// ids and sequence numbers on every run, whichever goroutine reached the
// gate first (numbered as they arrived, the two deliveries' first calls
// were 1:op#1 and 2:op#2 on one run, 2:op#1 and 1:op#2 on the next).
// Numbering is the recorder's and happens once per call.
func (l *lockstep) numberReadyLocked() {
	// The calls ready are one or two at a time: listed on the stack, and
	// sorted only when there are two or more, not by sort.Slice's boxed
	// closure (the 55 allocations of the ten-write suite's concurrent
	// delivery). Both sorts take a few elements by insertion, in the same
	// order.
	var room [4]*Call
	ready := room[:0]
	for c, inv := range l.waiting {
		if l.ready(inv, l.nth[c]) {
			ready = append(ready, c)
		}
	}
	if len(ready) > 1 {
		slices.SortFunc(ready, func(a, b *Call) int {
			if l.nth[a] != l.nth[b] {
				return cmp.Compare(l.nth[a], l.nth[b])
			}
			return cmp.Compare(l.waiting[a], l.waiting[b])
		})
	}
	for i, c := range ready {
		l.rec.number(c)
		// The same write of an earlier delivery, let go with c, reaches
		// the judge first (judgeAfter).
		for j := i - 1; j >= 0 && l.nth[ready[j]] == l.nth[c]; j-- {
			if ready[j].inv != c.inv && ready[j].op == c.op && ready[j].rec.Identity == c.rec.Identity {
				judgeAfter(c, ready[j])
				break
			}
		}
	}
}

// lowestWaiting is the lowest delivery waiting at a gate.
func (l *lockstep) lowestWaiting() int {
	low := 0
	for _, inv := range l.waiting {
		if low == 0 || inv < low {
			low = inv
		}
	}
	return low
}

func (l *lockstep) ready(inv, k int) bool {
	if l.passed[inv] >= k {
		return true
	}
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
	l.numberReadyLocked()
	l.mu.Unlock()
}

// release lets every waiting and future call through (the scenario is
// being abandoned).
func (l *lockstep) release() {
	l.mu.Lock()
	l.bypass = true
	l.changedLocked()
	l.mu.Unlock()
}

// held describes the calls waiting at the gate.
func (l *lockstep) held() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for c, inv := range l.waiting {
		out = append(out, fmt.Sprintf("%s of delivery %d waits at its start gate for the other delivery", c.op.Name, inv))
	}
	sort.Strings(out)
	return out
}

// notOnLock ends the note of a delivery that went on alone while the
// other was on no lock.
const notOnLock = "the other delivery was on no lock (a sync.Mutex, a semaphore, a channel send, a singleflight) that this one may hold, so the harness, not the agent, may have run them one after the other"

// aloneNote is the report's note on a concurrent delivery whose
// deliveries went one after the other, not for a lock of the agent's
// (notOnLock), and that showed no error: the
// scenario's own notes say where and why (lockstep.Wait), but only under
// -v, and a report that said nothing more read as if two deliveries at
// once had been tested (red team rtX #4). It is "" otherwise.
func aloneNote(results []*Result) string {
	for _, res := range results {
		if res == nil || res.Scenario != ScenarioDuplicateConcurrent || res.Trace == nil {
			continue
		}
		for _, f := range res.Findings {
			if f.Severity == SeverityError {
				return ""
			}
		}
		for _, n := range res.Trace.Notes {
			if rest, ok := strings.CutPrefix(n, "concurrent delivery: "); ok && strings.Contains(rest, " went on alone at ") &&
				(strings.Contains(rest, notOnLock) || strings.Contains(rest, "did not test the deliveries at once")) {
				return ScenarioDuplicateConcurrent + " showed no problem, but its deliveries did not run at once throughout: " + rest +
					"; what only two deliveries at once do (a check-then-act) may not have been tested"
			}
		}
	}
	return ""
}
