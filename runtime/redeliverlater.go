package runtime

import "time"

// A redelivery comes later: a queue delivers a message again once its
// visibility timeout ran out, a worker restarts after a crash in seconds.
// By then the world has carried out what the first delivery set going (a
// queue's worker credited the job and deleted its row), and a keyed
// enqueue whose key vanished with the row queues the credit again. Run at
// once, the second delivery came while the first's job still waited, its
// key held, and the buggy world passed: SAFE in 8 to 10 runs of 10 (red
// team rW #1, a worker polling every 2 or 50 ms, no Settle). The retries
// inside one delivery (after a lost acknowledgement, a failure) still come
// at once, as an agent's retry does, and the concurrent redelivery at once
// with the first.
//
// So, where the baseline's world changed the state by itself after its
// agent returned (worldAfterReturn: a worker of Setup's) or a while after
// its last write returned (lateLag: a mail a timer sends, a booking a
// server makes after it answered 202), with no Settle given, the second
// delivery of duplicate_delivery/sequential and the restart after a crash
// begin once the state held still for as long as the baseline's end did
// (judge.redeliverStill) with no call of the run in flight, within
// judge.stillMax past that. A Settle, where given, already waits for that
// work at the end of each call (judge.before).

// redeliverHold returns how long the state must hold still before a later
// delivery of a run after base begins (0: no hold), given the baseline's
// trace, its stillFor, and whether a Settle is given.
func redeliverHold(base *Trace, stillFor time.Duration, settled bool) time.Duration {
	if base == nil || settled || base.rare == nil {
		return 0
	}
	switch x := base.odd(); {
	case x.worldAfterReturn:
		// A poller asleep in a select on its ticker looks at rest
		// (worldAtWork); the baseline read its end once it had held
		// still for endCalibrate, and saw the worker's change so.
		return max(stillFor, endCalibrate)
	case x.lateLag > 0:
		return stillFor
	}
	return 0
}

// holdForWorld holds the next delivery of r until the state held still for
// the judge's redeliverStill with no call of the run in flight, within
// the judge's stillMax past that, or until the scenario is abandoned.
func holdForWorld(r *recorder) {
	j := r.judge
	if j == nil || j.redeliverStill <= 0 || r.aborted.Load() {
		return
	}
	s, err := j.snapshot()
	if err != nil {
		return
	}
	clock := newPollClock()
	var on, since time.Duration
	for on < j.redeliverStill+j.stillMax {
		on, _ = clock.sleep()
		if r.aborted.Load() {
			return
		}
		again, err := j.snapshot()
		if err != nil {
			return
		}
		if again != s || r.callsInFlight() {
			s, since = again, on
			continue
		}
		if on-since >= j.redeliverStill {
			return
		}
	}
}
