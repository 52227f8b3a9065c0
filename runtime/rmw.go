package runtime

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A read-modify-write done again. An op declared idempotent says that a
// repeat with equal arguments changes nothing (a SET of the value there);
// a repeat with other arguments is an update (set the status to X, then
// to Y). That holds within what one delivery does, and the baseline shows
// it: there, the last value set is what one delivery leaves. It does not
// hold where the repeat's other arguments come from a read of what the
// first execution had set: an agent that reads the balance (250 after the
// first delivery's credit) and sets balance+250 again credits twice, each
// SET truthfully idempotent (red team rtT #6: a Redis GET then SET, a GORM
// read then upsert of stock; the suite said SAFE, the second SET taken
// for an update).
//
// The rule: in a run that is not the baseline, whose end was read once the
// world held still (or a Settle saw it quiet), and whose baseline saw no
// change outside its traced writes (no worker of the world at work), a
// repeat with other arguments than any call of its op in the baseline was
// given, whose own window changed some places, whose value there stood to
// the end, and where the end differs from the baseline's end, is a second
// effect: one delivery leaves something else there. A correct agent's
// updates set values its baseline sets too (the baseline set X then Y, and
// so does each delivery), and are still updates, wherever the run ends (a
// fault the agent gave up on leaves Y where the baseline went on to set X
// again). Moments a clock wrote (a last_seen of each delivery) and tokens
// drawn at random (freshPair) are left out: a redelivery that stamps its
// own time or draws its own token is not a double effect. And where the
// repeat's delivery was told that a call failed before it, only with a
// traced read between the two, of what the op writes, that answered
// otherwise than before the first: such a delivery may write what it does
// on failure (a status set to failed), a value its baseline never set.

// rereadRepeat judges o, a repeat of first with other arguments of an op
// declared idempotent, seen by its own window to change the state, when
// the run's end says what one delivery leaves (quiet): it returns a note
// that says why o is a second effect, or "" where o is an update. Where
// the end cannot say it (not quiet), it returns "" and unsure, a note for
// the scenario's inconclusive result, when o's value stood at the end
// otherwise than the baseline's end holds it.
func rereadRepeat(tr, baseTr *Trace, first, o *Operation, end, baseEnd string, quiet bool, views *stateViews) (note, unsure string) {
	if end == "" || baseEnd == "" || !o.stateSeen() || baseTr == nil || setInBaseline(baseTr, o) {
		return "", ""
	}
	before, after := o.stateWindow()
	bv, av := views.of(before), views.of(after)
	places, ok := changedPlaces(bv, av)
	if !ok || len(places) == 0 {
		return "", ""
	}
	ev, bev := views.of(end), views.of(baseEnd)
	if ev == nil || bev == nil {
		return "", ""
	}
	var differs []place
	for _, p := range places {
		x, y := ev.at(p), bev.at(p)
		if !sameValue(av.at(p), x) || sameValue(x, y) || holdsClock(x) && holdsClock(y) || freshPair(unquoted(x), unquoted(y)) {
			continue
		}
		differs = append(differs, p)
	}
	if len(differs) == 0 {
		return "", ""
	}
	there := describeEnds(differs[:1], ev, bev)
	if !quiet {
		return "", fmt.Sprintf("%s repeated %s with other arguments, and the run ended with %s; %s is declared idempotent, so this is an update unless the other arguments came from a read of what %s had set (a read-modify-write done again), and the suite could not tell: the world changed the state outside the traced writes in the baseline, so the end may not say what one delivery leaves; give a Settle (testkit.SettleOn) that waits for the world, so the end can be compared (testkit.FailInconclusive fails the test on such a scenario)",
			o.ID, first.ID, there, o.Name, first.ID)
	}
	read := rereadBetween(tr, first, o)
	saw := read != nil && readBefore(tr, first, read) != readMissed
	if !saw && toldOfFailure(tr, o) {
		// A delivery told that a call failed may write what it does on
		// failure (an order's status set to failed), which its baseline
		// never set: without a read that saw the first's effect, the
		// suite cannot tell that from a change computed again.
		return "", ""
	}
	if saw {
		return fmt.Sprintf("with other arguments than %s, after %s read what %s had set (it answered %s): a read-modify-write done again on top of its own effect; the run ended with %s; the idempotent declaration covers repeats with equal arguments, and a correct update leaves what one delivery leaves",
			first.ID, read.ID, first.ID, clip(encode(read.Result), 80), there), ""
	}
	return fmt.Sprintf("with other arguments than %s, and the run ended with %s, where its value stood: the other arguments were made from what %s had set (a read-modify-write done again), or from something else that differs between deliveries; the idempotent declaration covers repeats with equal arguments, and a correct update leaves what one delivery leaves",
		first.ID, there, first.ID), ""
}

// setInBaseline says whether a call of o's op in the baseline was given
// o's arguments: the value o set is one the agent sets in one delivery
// (open, hold, then open again), and where a run ends with it, the agent
// stopped there (a fault it gave up on), it did not compute it anew.
func setInBaseline(baseTr *Trace, o *Operation) bool {
	k := argsKey(o)
	for i := range baseTr.Ops {
		if b := &baseTr.Ops[i]; b.Name == o.Name && b.Kind == KindWrite && argsKey(b) == k {
			return true
		}
	}
	return false
}

// unquoted returns the string an encoded JSON string holds, or s.
func unquoted(s string) string {
	var u string
	if json.Unmarshal([]byte(s), &u) == nil {
		return u
	}
	return s
}

// toldOfFailure says whether o's delivery had a call fail, or a fault
// injected, before o.
func toldOfFailure(tr *Trace, o *Operation) bool {
	for i := range tr.Ops {
		p := &tr.Ops[i]
		if p == o {
			return false
		}
		if p.Invocation == o.Invocation && (p.Fault != "" || p.Status != StatusSuccess) {
			return true
		}
	}
	return false
}

// describeEnds says what the run's end ev holds at places, and what the
// baseline's end bev holds there.
func describeEnds(places []place, ev, bev *stateView) string {
	parts := make([]string, 0, len(places))
	for _, p := range places {
		parts = append(parts, fmt.Sprintf("%s: %s where one delivery leaves %s", p.name(), clip(ev.at(p), 60), clip(bev.at(p), 60)))
	}
	return strings.Join(parts, ", ")
}

// rereadBetween returns the traced read that o's delivery made after
// first and before o, of what o writes (its entity, or its identity),
// that answered: the read o's arguments were likely made from; nil if
// there was none.
func rereadBetween(tr *Trace, first, o *Operation) *Operation {
	from, to := -1, -1
	for i := range tr.Ops {
		switch &tr.Ops[i] {
		case first:
			from = i
		case o:
			to = i
		}
	}
	if from < 0 || to < 0 {
		return nil
	}
	for i := to - 1; i > from; i-- {
		r := &tr.Ops[i]
		if r.Kind != KindRead || r.Invocation != o.Invocation || r.Status != StatusSuccess || r.Result == nil {
			continue
		}
		if r.Entity != "" && (r.Entity == o.Entity || r.Entity == o.Identity) {
			return r
		}
	}
	return nil
}

// quietEnd says whether tr's end says what its deliveries left: a Settle
// saw the world quiet; or the baseline (baseTr) saw no change outside its
// traced writes (un nil), none after its agent returned and no worker of
// the world at work at its end, this run saw none outside its own traced
// writes, and either its end was read once it held still, or Setup left
// no goroutine running that could change it later (the end is then read
// once, when the deliveries are done: judge.finish), or the baseline's
// end, read again while the goroutines Setup left ran (a Redis server's,
// a database's), held still from the first read on.
func quietEnd(tr *Trace, un *untraced, baseTr *Trace) bool {
	if tr.endSettled {
		return true
	}
	if tr.odd().carriedRestless {
		return false // a server may still have been at work for a delivery (holdCarriedStill)
	}
	if baseTr == nil || un != nil || len(tr.gaps) > 0 || len(baseTr.gaps) > 0 || baseTr.odd().worldAfterReturn || baseTr.odd().endBusy != "" || tr.odd().endBusy != "" {
		return false
	}
	return tr.endStill || !baseTr.worldLive || baseTr.endStill && baseTr.landedAfter == 0
}

// repeatAdvice is what a duplicate_write finding of first's op, executed
// as dups, tells to do. "Re-read before retrying" is the usual advice,
// but not where the repeat was made from a read (reread, a read-modify-
// write done again), nor where the agent did re-read the entity before
// the repeat and the read did not show the first's effect (a search index
// that lags, a replica, a cache: red team rtT #7): there a re-read cannot
// guard the write, and only the sink can.
//
// rereads says tr holds a read rereadBetween could return (hasEntityRead),
// asked once per trace by the caller: without one, no repeat's call is
// looked up and no span scanned (10 us of the ten-write suite's 75
// findings; asked for each finding, the scan of the trace still took 8).
func repeatAdvice(tr *Trace, first *Operation, dups []string, reread, rereads bool) string {
	const rmw = "; a re-read cannot guard a change computed from what is there once an earlier delivery has applied it: apply each change once at the sink, keyed by what identifies it (the message's or the event's id, idem.Store), or write a value the message itself carries"
	if reread {
		return rmw
	}
	const usual = "; make the write idempotent at the sink (idem.Store) or re-read before retrying"
	if !rereads {
		return usual
	}
	for _, id := range dups[1:] {
		o := traceOp(tr, id)
		if o == nil {
			continue
		}
		if r := checkedBeside(tr, first, o); r != nil {
			return fmt.Sprintf("; the deliveries ran at once, and %s, delivery %d's read of the same entity, began before %s: a check-then-act whose check ran beside the other delivery's work, not after its write, which no re-read guards; make check and write one step at the sink: a unique constraint the write hits, a lock held around the check and the write (a database's advisory lock, SELECT ... FOR UPDATE), or idem.Store around both", r.ID, o.Invocation, first.ID)
		}
		r := rereadBetween(tr, first, o)
		if r == nil {
			continue
		}
		switch readBefore(tr, first, r) {
		case readSaw:
			return rmw
		case readMissed:
			return fmt.Sprintf("; the agent did re-read before the repeat (%s, of the same entity), and the read answered what it answered before %s ran: it does not show what %s changes, or it is stale (a search index, a replica, a cache), so this re-read cannot guard the write: make it idempotent at the sink, keyed by the logical operation (an idempotency key, a unique key, idem.Store)", r.ID, first.ID, first.Name)
		}
	}
	return usual
}

// checkedBeside returns the read of o's entity that o's delivery made
// before o and that began before first, a write of another delivery: the
// two deliveries ran at once, and o's check did not wait for first's
// write (a check-then-act; red team rtW #9b: find_customer, then
// create_customer, both deliveries' finds before either create, in
// duplicate_delivery/concurrent). nil when there is none. A delivery
// that comes after the other (sequential, a restart) reads after its
// write, and gets the advice above.
func checkedBeside(tr *Trace, first, o *Operation) *Operation {
	if o.Invocation == first.Invocation {
		return nil
	}
	for i := range tr.Ops {
		r := &tr.Ops[i]
		if r.ID == first.ID || r.ID == o.ID {
			break // tr.Ops is in start order: later reads began after first
		}
		if r.Kind == KindRead && r.Invocation == o.Invocation && r.Status == StatusSuccess && r.Entity != "" && (r.Entity == o.Entity || r.Entity == o.Identity) {
			return r
		}
	}
	return nil
}

// hasEntityRead says whether tr holds a read that rereadBetween could
// return: one that succeeded, with an answer, of an entity.
func hasEntityRead(tr *Trace) bool {
	for i := range tr.Ops {
		if r := &tr.Ops[i]; r.Kind == KindRead && r.Status == StatusSuccess && r.Result != nil && r.Entity != "" {
			return true
		}
	}
	return false
}

// What a re-read answered, against the same read made before the write
// it followed (readBefore).
const (
	readUnknown = iota // no such read before the write
	readSaw            // it answered otherwise: it saw the write's effect
	readMissed         // it answered the same: it did not
)

// readBefore compares the answer of read r, made after first, with that of
// the last call of r's op on r's entity that returned before first began.
func readBefore(tr *Trace, first, r *Operation) int {
	at := slices.IndexFunc(tr.Ops, func(o Operation) bool { return o.ID == first.ID })
	for i := at - 1; i >= 0; i-- {
		p := &tr.Ops[i]
		if p.Name != r.Name || p.Entity != r.Entity || p.Status != StatusSuccess || p.Kind != KindRead {
			continue
		}
		if encode(p.Result) == encode(r.Result) {
			return readMissed
		}
		return readSaw
	}
	return readUnknown
}

// argsAdvice is what a duplicate_write finding of the calls ids says of
// their arguments, which differ (differingArgs: differ, in the arguments
// names). Where each call may be an effect of its own (a status set to
// one value, then another), the op's identity= should tell them apart.
// Not where the repeat was a read-modify-write done again (its other
// value is the second effect: taken into the identity, it would hide it),
// nor where an argument holds a random value made anew for each call (a
// uuid made in the retry loop, red team rtT #1): that value is the bug,
// and it must come from the logical operation, not be put in identity=.
func argsAdvice(tr *Trace, ids []string, differ string, names []string) string {
	for _, id := range ids[1:] {
		if slices.Contains(tr.odd().reread, id) || sawFirst(tr, ids[0], id) {
			return fmt.Sprintf("; the calls' arguments differ (%s), and the run ended otherwise than one delivery leaves: adding %s to identity= would hide that second effect, not fix it", differ, strings.Join(names, ", "))
		}
	}
	var fresh []string
	for _, name := range names {
		if freshEachCall(tr, ids, name) {
			fresh = append(fresh, name)
		}
	}
	if len(fresh) > 0 {
		return fmt.Sprintf("; the calls' arguments differ (%s): %s holds a random value made anew for each call (a key made afresh for each attempt), so the sink takes each attempt for new work: make the key once from the logical operation (the message's id, the order, the session: idem.Key), outside the retry loop, and do not add it to identity=", differ, strings.Join(fresh, ", "))
	}
	return fmt.Sprintf("; the calls' arguments differ (%s): if each call is an effect of its own (a status set to one value, then another), add what tells them apart to the op's identity= (%s)", differ, strings.Join(names, ", "))
}

// freshEachCall reports whether argument name of the calls ids holds, in
// each, a string that looks drawn at random, each against every other
// (freshPair: one alphabet, one length, differing in most places).
func freshEachCall(tr *Trace, ids []string, name string) bool {
	var vals []string
	for _, id := range ids {
		a := tr.argsOf(id)
		i := slices.Index(a.Names, name)
		if i < 0 || i >= len(a.Values) {
			return false
		}
		var s string
		if err := json.Unmarshal(appendValue(nil, a.Values[i]), &s); err != nil {
			return false
		}
		vals = append(vals, s)
	}
	for i := range vals {
		for j := i + 1; j < len(vals); j++ {
			if !freshPair(vals[i], vals[j]) {
				return false
			}
		}
	}
	return len(vals) > 1
}

// sawFirst reports whether call id, a repeat of call firstID, followed a
// read of what it writes, made by its delivery after firstID, that
// answered otherwise than the same read before firstID: its arguments
// were likely computed from what firstID had set.
func sawFirst(tr *Trace, firstID, id string) bool {
	first, o := traceOp(tr, firstID), traceOp(tr, id)
	if first == nil || o == nil {
		return false
	}
	r := rereadBetween(tr, first, o)
	return r != nil && readBefore(tr, first, r) == readSaw
}
