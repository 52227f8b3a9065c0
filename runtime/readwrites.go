package runtime

import (
	"fmt"
	"sync"
	"time"

	"github.com/agentidem/agentidem-go/internal/bubble"
)

// A tool annotated //agentidem:read that writes (a "notify" that POSTs an
// email) is never faulted nor judged as a write: its repeats, which send
// the email again on every redelivery, pass unseen, and a suite with State,
// which watched the outbox grow inside the read's own call, said SAFE with
// nothing to note (red team rtV #25). So in the baseline, with State, the
// judge also snapshots around each read that runs alone (no other traced
// call in flight while it runs) and looks for one whose own window changed
// the state while the world held still around it: the state it began from
// is the last one the judge saw, and the next snapshot, whenever it is
// taken (the next call's, the run's end), finds the state the read left.
//
// State for this check runs in a goroutine of the harness, bounded by
// readSnapshotBound: the agent may hold across a read what State needs
// (a transaction on a database/sql pool of one connection, begun before
// the read and committed after it), and a State called on the read's own
// goroutine then waited for good, stalling a baseline that passed before.
// A State that does not answer in time turns the check off for the run;
// its call finishes in the background once the agent lets it, and its
// answer is dropped. Not in a testing/synctest bubble, whose clock the
// bound would not follow.
//
// Such a change is a read_changed_state warning in the baseline, which
// makes the suite INCONCLUSIVE, never an error: the suite cannot prove
// whose change it was. A worker that Setup started may have landed its
// effect in that very window, so a read that follows a write in a world
// whose Setup left goroutines running (worldLive), where that is most
// likely, is not checked at all, nor are reads made inside another call
// or beside one. Nor is a read after a write whose code arms a timer or
// starts a goroutine (writeLeftWork, scenariocode.go): a reminder the
// write scheduled with time.AfterFunc, sent while the read waited for it,
// has no goroutine until it fires, and such a read was told that "the
// world held still" (red team rtX #2). A read before any such write is
// checked. No Settle is run around a read: the agent's timing is
// left alone.

// readCheck is the judge's record of reads in the baseline.
type readCheck struct {
	mu        sync.Mutex
	off       bool   // a State did not answer within readSnapshotBound
	last      string // the last snapshot the judge took
	haveLast  bool
	starts    int // traced calls begun, reads and writes
	readsIn   int // reads in flight
	writesIn  int // writes in flight
	lastWrite bool
	open      map[*Call]*readWindow
	pending   *readChange // waits for the next snapshot to confirm it
	found     []readChange
}

type readWindow struct {
	prev       string
	hasPrev    bool
	before     string
	start      int
	busy       bool // another call in flight, or a snapshot failed
	afterWrite bool
}

// readChange is a read whose own window changed the state.
type readChange struct {
	op, id, change, after string
	before                bool // the state it began from was the last one seen
}

// seen notes snapshot s, taken by the judge; it confirms or drops a read's
// change waiting for the next one.
func (rc *readCheck) seen(s string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if p := rc.pending; p != nil {
		rc.pending = nil
		if s == p.after {
			rc.found = append(rc.found, *p)
		}
	}
	rc.last, rc.haveLast = s, true
}

// writeBegins and writeEnds count the writes in flight.
func (rc *readCheck) writeBegins() {
	rc.mu.Lock()
	rc.writesIn++
	rc.starts++
	rc.lastWrite = true
	rc.mu.Unlock()
}

func (rc *readCheck) writeEnds() {
	rc.mu.Lock()
	rc.writesIn--
	rc.mu.Unlock()
}

// readBefore opens read c's window.
func (j *judge) readBefore(c *Call) {
	rc := j.reads
	rc.mu.Lock()
	rw := &readWindow{busy: rc.writesIn > 0 || rc.readsIn > 0 || c.parent != nil, afterWrite: rc.lastWrite, prev: rc.last, hasPrev: rc.haveLast}
	rc.readsIn++
	rc.starts++
	rw.start = rc.starts
	rc.lastWrite = false
	rc.mu.Unlock()
	if !rw.busy {
		s, ok := j.readSnapshot()
		rw.before, rw.busy = s, !ok
	}
	rc.mu.Lock()
	if rc.open == nil {
		rc.open = map[*Call]*readWindow{}
	}
	rc.open[c] = rw
	rc.mu.Unlock()
}

// readAfter closes read c's window, and notes a change it made alone.
func (j *judge) readAfter(c *Call) {
	rc := j.reads
	rc.mu.Lock()
	rw := rc.open[c]
	delete(rc.open, c)
	rc.readsIn--
	alone := rw != nil && !rw.busy && rc.starts == rw.start && rc.writesIn == 0 && rc.readsIn == 0
	rc.mu.Unlock()
	if !alone || rw.hasPrev && rw.prev != rw.before || rw.afterWrite && j.worldLive || writeLeftWork(c) {
		return
	}
	s, ok := j.readSnapshot()
	if !ok || s == rw.before {
		return
	}
	id := c.ID()
	rc.mu.Lock()
	if rc.starts == rw.start && rc.writesIn == 0 && rc.readsIn == 0 {
		rc.pending = &readChange{op: c.op.Name, id: id, change: describeChange(rw.before, s, maxChange), after: s, before: rw.hasPrev}
	}
	rc.mu.Unlock()
}

// readFindings returns the baseline's read_changed_state warnings, one per
// op.
func (j *judge) readFindings() []Finding {
	if j == nil || j.reads == nil {
		return nil
	}
	j.reads.mu.Lock()
	defer j.reads.mu.Unlock()
	var out []Finding
	seen := map[string]bool{}
	for _, r := range j.reads.found {
		if seen[r.op] {
			continue
		}
		seen[r.op] = true
		still := "held still after it"
		if r.before {
			still = "held still before and after it"
		}
		out = append(out, Finding{Code: CodeReadChangedState, Severity: SeverityWarning, Ops: []string{r.op}, Calls: []string{r.id},
			Message: fmt.Sprintf("%s is annotated read, but the state changed while its call %s ran (%s), with no other traced call in flight, and the world %s: a call that changes the world is a write, and a read is never faulted nor judged as one, so a redelivery or a retry that calls it again does it again, untested; if it has an effect, annotate it //agentidem:write identity=... (what names the effect: the recipient and subject of a mail); if the world changed by itself at that moment (a worker that Setup started), give a Settle that waits for such work, or leave that part out of State",
				r.op, r.id, r.change, still)})
	}
	return out
}

// readSnapshotBound is how long the read check waits for State.
const readSnapshotBound = time.Second

// readSnapshot takes State's snapshot for the read check, in a goroutine
// of the harness, waiting for it no longer than readSnapshotBound; false
// when there is none (State failed, did not answer in time, or the check
// is off). A failure here is no State failure of the run's: the judge's
// own snapshots say that.
func (j *judge) readSnapshot() (string, bool) {
	rc := j.reads
	rc.mu.Lock()
	off := rc.off
	rc.mu.Unlock()
	if off || bubble.In() {
		return "", false
	}
	type answer struct {
		s  string
		ok bool
	}
	ch := make(chan answer, 1)
	goHarness(func() {
		a := answer{}
		defer func() {
			recover() // a State that panics: no snapshot
			ch <- a
		}()
		defer enterHook(false).leave()
		s, err := Canonical(j.state())
		a = answer{s, err == nil}
	})
	t := time.NewTimer(readSnapshotBound)
	defer t.Stop()
	select {
	case a := <-ch:
		return a.s, a.ok
	case <-t.C:
		rc.mu.Lock()
		rc.off = true
		rc.mu.Unlock()
		return "", false
	}
}
