package runtime

import "fmt"

// The end of a run whose world carries out by itself what the calls set
// going (a queue's worker that Setup started, which refunds a job after its
// next poll) is what tells whether a repeat left a second effect, and it
// tells only once that worker is done. Held still for a while is no proof:
// a worker asleep until its next poll leaves the state still meanwhile,
// and a run of a correct agent whose worker refunded 30 ms after the call
// ended with no refund at all, counted as a second one; the buggy twin's
// second refund, landing after the end was read, passed (red team rtR #9,
// #3). So the end is read, where it can be, with the world's goroutines at
// rest as well (judge.finish, worldAtWork).

// worldAtWork reports where a goroutine that descends from the goroutine
// Setup ran in is at work: running, or asleep (time.Sleep, a library's
// timed wait or retry back-off), which ends by itself and then acts; ""
// when none is. A goroutine blocked on a channel, a lock or network I/O
// waits for another to act first (a job queued, a server's answer) and is
// at rest here: a consumer waiting for its next message, a client's
// connection pool. A goroutine whose creator ended before it is not known
// to descend from Setup (the line of creators breaks) and is not looked at.
func (w *world) worldAtWork() string {
	all, setup := w.setupGoroutines()
	for i := range all {
		g := &all[i]
		if !setup[g.id] {
			continue
		}
		switch {
		case g.state == "running" || g.state == "runnable" || g.state == "preempted":
			return g.where() + " (running)"
		case g.state == "sleep":
			return g.where() + " (asleep)"
		case (g.state == "select" || g.state == "chan receive") && len(g.funcs) > 0 && (timedWait(g.funcs[0]) || retryBackoff(g.funcs[0])):
			return g.where() + " (" + timedWaitWhy + ")"
		}
	}
	return ""
}

// setupParked reports where a goroutine that descends from the goroutine
// Setup ran in, and runs the user's code (runsUserCode), is blocked: in a
// select or a channel receive, as a poller written with a time.Ticker is
// between two polls (worldAtWork takes it for at rest, since a consumer
// waiting for its next message looks the same); "" when none is. A
// library's own goroutines (database/sql's connection opener, a server's
// accept loop) run none of the user's code, and are not looked at.
func (w *world) setupParked() string {
	all, setup := w.setupGoroutines()
	for i := range all {
		if g := &all[i]; setup[g.id] && (g.state == "select" || g.state == "chan receive") && g.runsUserCode() {
			return g.where() + " (" + g.state + ")"
		}
	}
	return ""
}

// setupGoroutines returns the process's goroutines and, of them, those
// that descend from the goroutine Setup ran in; none when Setup ran none.
func (w *world) setupGoroutines() ([]gInfo, map[uint64]bool) {
	w.mu.Lock()
	if len(w.hooks) == 0 {
		w.mu.Unlock()
		return nil, nil
	}
	setup := make(map[uint64]bool, len(w.hooks))
	for _, id := range w.hooks {
		setup[id] = true
	}
	w.mu.Unlock()
	all := snapshotGoroutines()
	for grew := true; grew; {
		grew = false
		for i := range all {
			if g := &all[i]; !setup[g.id] && g.parent != 0 && setup[g.parent] {
				setup[g.id], grew = true, true
			}
		}
	}
	return all, setup
}

// busyEndNote says why the repeat id of op was not judged: the end, alike
// the baseline's, was read while a goroutine Setup started was still at
// work, at where.
func busyEndNote(op, id, where string) string {
	return fmt.Sprintf("%s (a repeat of %s) was not judged: no call of %s changed the state in its own window, and the run ended as the baseline did, but a goroutine that Setup started was still at work at %s when the wait for the end ran out: what the repeat queued (a second job its worker carries out after the next poll) may land after the end was read, so the end cannot say whether a second effect stayed; give a Settle that waits for that work (testkit.SettleUntil, with the count of jobs queued or running)", id, op, op, where)
}

// queuedOnlyNote says why the repeat id of op was not judged: op changed
// the state in no window of its own, and in the baseline the world made
// its change after the agent returned (judgeRepeatsIn, queuedOnly). where,
// if not "", is where a goroutine Setup started was still at work.
func queuedOnlyNote(op, id, where string) string {
	busy := ""
	if where != "" {
		busy = fmt.Sprintf(" (one was still at work at %s when the wait ran out)", where)
	}
	return fmt.Sprintf("%s (a repeat of %s) was not judged: no call of %s changed the state in its own window, here or in the baseline, where a worker of the world (a goroutine Setup started, or one a tool left running) changed it after the agent returned, carrying out what the call queued or sent; this run ended as the baseline did, but with no Settle the suite cannot tell whether a second job the repeat queued was still waiting when the end was read (a poller picks it up at its next fetch, its goroutines at rest meanwhile)%s; give a Settle that waits for the queue to drain (testkit.SettleUntil, with the count of jobs queued or running) for the suite to judge the repeat", id, op, op, busy)
}

// parkedWorldNote says why the repeat id of op was not judged: no
// execution of op changed the state, here or in the baseline, in its
// window or after it, but when the baseline's end was read a goroutine
// that Setup started, running the user's code, was at where (blocked, or
// at work), and may carry out what the calls queued after the end.
func parkedWorldNote(op, id, where string) string {
	return fmt.Sprintf("%s (a repeat of %s) was not judged: no execution of %s changed the state, here or in the baseline, in its window or after it, and the run ended as the baseline did, but a goroutine that Setup started, running your code, was at %s when the baseline's end was read: if it carries out what the call queued (a poller between two polls, a worker whose job takes longer than the wait for the end), the effect lands after the end, in one execution or in two, and cannot be seen; give a Settle that waits for that work (testkit.SettleUntil, with the count of jobs queued or running); if State leaves out what %s changes, add it", id, op, op, where, op)
}

// finishedAllNote says why repeat o was not judged where its window made
// the whole of one execution's change and the first execution's window
// none of it (judgeRepeatsIn, finishedAll).
func finishedAllNote(o *Operation, first string) string {
	return fmt.Sprintf("%s (a repeat of %s) was not judged: %s's window held no change, and the repeat's window made the change one execution made in the baseline, no more: %s's effect landing late (a worker that Setup started, carrying out what the call queued, slower than in the baseline), and the run ended as the baseline did, so nothing shows whether the repeat set a second effect going that lands later; give a Settle that waits for that work (testkit.SettleUntil)", o.ID, o.Name, first, first)
}
