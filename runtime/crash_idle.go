package runtime

import (
	"fmt"
	"strings"
	"time"
)

// A crash ends the goroutines of its invocation that make a later call
// (stopIfCrashed), as the death of the worker would end them. What it
// cannot end is a goroutine of the invocation that never calls again and
// waits for one that was ended: an agent that started workers and collects
// their answers over a channel, with plain receives, waits for an answer
// no worker is left to send. In production the crash takes the whole
// process, collector and all; here the collector waited until the stall
// timeout, and every crash_restart scenario of such an agent, correct or
// not, failed as stalled, with no redelivery run.
//
// So a crashed invocation that has not returned is taken as gone once it
// looks as if it can no longer act: no call of the run is in flight, the
// run made no progress for crashIdle, and none of the invocation's
// goroutines can go on by itself (each is blocked on a channel, a select,
// a lock or a condition, none asleep, running or waiting for network I/O:
// world's busy; one whose code, the agent's own, reads a reply counts
// so for readGrace only). Its delivery then ends with errCrashed, its goroutines
// are left where they wait, as a stalled agent's are, the trace notes
// where, and the invocation is delivered again. Known limit: a goroutine
// the invocation did not start (a fake model the test started, which
// answers after a sleep) may still wake it after crashIdle; its next call
// is then stopped as any call of a crashed invocation is, during the
// redelivery, and the note says what was seen, not that it cannot wake.

// crashIdle is how long a crashed invocation must make no progress, with
// none of its goroutines able to act, before it is taken as gone: longer
// than the latency fakes of a model or a service usually sleep, far
// shorter than the stall timeout it waited for before.
const crashIdle = 200 * time.Millisecond

// crashPoll is how often a delivery waiting for a crashed invocation
// looks at it.
const crashPoll = 5 * time.Millisecond

// crashWatch follows a crashed invocation that has not returned, for
// invokeNumbered.
type crashWatch struct {
	seen  int64     // r.progress when last looked
	since time.Time // when progress was first seen at seen
	// reading holds the goroutines seen waiting for network I/O of the
	// agent's own (ioAwaited), since when: as in world.quiet, they count
	// as busy for readGrace only, so that a goroutine of the crashed
	// invocation that reads for good (a websocket's loop) does not hold
	// its redelivery up until the stall bound.
	reading map[uint64]time.Time
}

// gone reports whether inv crashed and can no longer act, and if so
// notes, on the run's trace, where its goroutines were left.
func (cw *crashWatch) gone(r *recorder, inv *invocation, self uint64) bool {
	if !inv.dead.Load() || r.world == nil || r.aborted.Load() {
		// A scenario that stalled is ended by its stall watch, which
		// says whether the agent was left running: both waited as long
		// (the stall bound twice, crashIdle), and which ended the run
		// changed its message from run to run.
		return false
	}
	p, now := r.progress.Load(), time.Now()
	if p != cw.seen || cw.since.IsZero() {
		cw.seen, cw.since = p, now
		return false
	}
	if now.Sub(cw.since) < crashIdle || r.callsInFlight() {
		return false
	}
	var where []string
	w := r.world
	grace := readGraceUnder(r.stallAfter)
	busy := false
	for _, g := range w.ours(w.snapshot(), self) {
		if g.harnessWait() || g.state == "IO wait" && g.idleConnection() {
			continue
		}
		what := describeState(g.state)
		if b, why := g.busy(time.Time{}); b {
			// Each read's grace runs from when it was first seen,
			// whatever else is busy: all of the goroutines are looked at.
			if why != ioAwaited || !cw.readLapsed(g.id, now, grace) {
				busy = true
				continue
			}
			what = fmt.Sprintf("waiting for network I/O for more than %s, taken for a loop that reads for good", grace)
		}
		if n := w.invocationOf(g.id); n == inv.n {
			where = append(where, fmt.Sprintf("goroutine %d %s at %s", g.id, what, g.where()))
		}
	}
	if busy {
		cw.since = now // look again after another crashIdle
		return false
	}
	if len(where) == 0 {
		return false // nothing of it is left but what returns by itself
	}
	if len(where) > maxBlocked {
		where = append(where[:maxBlocked:maxBlocked], fmt.Sprintf("and %d more", len(where)-maxBlocked))
	}
	r.addNote(fmt.Sprintf("delivery %d crashed and did not return: for %s nothing of the run progressed and none of its goroutines was running, asleep or waiting for an answer over the network (%s), as if waiting for goroutines the crash ended; it was taken as gone, as a crashed process is, its goroutines were left where they wait, and the invocation was delivered again",
		inv.n, crashIdle, strings.Join(where, "; ")))
	return true
}

// readLapsed reports whether goroutine gid, waiting for network I/O of the
// agent's own, was first seen so more than grace before now.
func (cw *crashWatch) readLapsed(gid uint64, now time.Time, grace time.Duration) bool {
	t, ok := cw.reading[gid]
	if !ok {
		if cw.reading == nil {
			cw.reading = map[uint64]time.Time{}
		}
		cw.reading[gid], t = now, now
	}
	return now.Sub(t) > grace
}

// callsInFlight reports whether a call of the run began and has not ended.
func (r *recorder) callsInFlight() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, chunk := range r.calls {
		for _, c := range chunk {
			c.mu.Lock()
			ended := c.rec.ended
			c.mu.Unlock()
			if !ended {
				return true
			}
		}
	}
	return false
}
