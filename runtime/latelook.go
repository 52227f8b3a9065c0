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
