package runtime

import "time"

// An effect that lands a moment after the agent returned, with nothing of
// the world's running. A mail service that arms a timer per mail (Go's
// time.AfterFunc) sends it with no goroutine there to wait for: the
// baseline's end, read at once where nothing had moved when the agent
// returned, held no mail, while a later run, whose end came a little
// later, held it. A correct agent whose schedule is keyed was then judged
// against an end without its effect: State saw no execution change the
// world, and its repeat counted as a duplicate_write (red team rtX's
// reminder agent, 1 run in 3; with the mail 0 to 10 ms after the agent
// returned, in 1 to 3 runs of 6: TestAMailThatLandsAfterTheAgentReturned).
//
// The baseline now reads its state once more, lateLook after its end,
// where nothing had moved; a change there is read to its end as any change
// outside the traced writes is (judge.finish), and it learns how long
// after its last write returned the change came (lateLag). A run that
// repeats a write then reads its end no sooner than lateWait(lateLag)
// after its own last write returned: a second mail the repeat scheduled
// lands as late after it, and is in the end (the naive agent's sequential
// redelivery, whose second mail came 40 ms after an end read 25 ms after
// the redelivery returned, passed before).

// lateLook is how long after its end the baseline reads its state again
// where nothing had moved (judge.lookLate). A change later than that is
// not seen there, and a repeat whose window changed nothing counts as it
// always did (State saw no execution change the world).
const lateLook = endStill

// lateLagMax bounds what the baseline learns of how late its effect came
// (judge.lateLag): a run that repeats a write waits at most that, and
// lateWait's margin (endStillMax and a poll), past its last write for its
// end.
const lateLagMax = 5 * time.Second

// lateWait is how long after its last write returned a run that repeats a
// write waits at least for its end, where the baseline's effect came lag
// after its last write: that long again, and a margin for a loaded
// machine's timers (as much again, at least endStill, at most
// endStillMax).
func lateWait(lag time.Duration) time.Duration {
	return lag + min(max(lag, endStill), endStillMax) + endPoll
}

// lateReadAt returns when, at the soonest, the end of this run may be
// read (zero where no such bound holds): lateWait(lateLag) after its last
// window closed with nothing in flight, in a run that repeated a write.
func (j *judge) lateReadAt() time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lateLag <= 0 || j.lookLate || !j.repeated || j.idleAt.IsZero() {
		return time.Time{}
	}
	return j.idleAt.Add(lateWait(j.lateLag))
}

// An effect later than lateLook (a receipt a timer books 50 ms after the
// call that asked for it) is not in the baseline's end, and where the call
// changed the state in its window as well (a keyed charge beside the
// receipt), its repeat's window, which changed nothing, absorbed it: a run
// whose end held two receipts, which its own note said landed after its
// last write returned, passed against a baseline's end with none (red
// team rS #1, SAFE on every run at 50 and 200 ms). Such a run, whose state
// changed after its last write returned where the baseline's never did,
// and whose end is not the baseline's, is inconclusive: the ends cannot
// say what the repeats did (lateUnseenInBase, lateUnseenNote). One whose
// end is the baseline's (the late effect had not landed here either) is
// judged as before.

// lateUnseenInBase reports whether the baseline's state never changed
// after its last write returned, nor between its writes, with no goroutine
// of Setup's running: its end holds no late effect.
func lateUnseenInBase(base *Trace) bool {
	return !base.worldLive && base.odd().lateLag == 0 && len(base.gaps) == 0 && base.end != "" && base.returned == base.end
}

// lateUnseenNote says why a run whose state changed after its last write
// returned is inconclusive where the baseline's never did.
const lateUnseenNote = "the baseline's state did not change after its last write returned (its end was read " + "again 25 ms after, where nothing had moved), so its end holds none of what landed late here, and the run's end, which differs from it, cannot say whether a repeat made a late effect twice (a receipt a service books a while after the call that asked for it): the scenario is inconclusive; give a Settle that waits for such effects (testkit.SettleUntil with what the world has pending) for the suite to judge the repeats by ends that hold them"
