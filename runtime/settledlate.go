package runtime

import (
	"fmt"
	"strings"
)

// A first execution's effect that lands in the repeat's window although a
// Settle was given. The Settle runs before a repeat's window opens, so
// that what the first execution set going lands before it; a Settle that
// reads a count lagging behind the work (a JetStream consumer's pending
// counts, read before the server counted the message just published)
// says the world is quiet while the first's message still waits. The
// consumer that Setup started then made the first's ticket while the
// repeat ran, and the correct (keyed) publisher was a duplicate_write:
// "the repeat changed the state: 0 → 1 entry", on an end that held the
// baseline's one ticket (red team rtU #5, 2 suites of 30 at GOMAXPROCS=2
// beside two more). finishedAll, the same rule without a Settle, did not
// apply: it trusts a settled window. Such a repeat is not judged here
// either: its scenario is inconclusive, with a note that names the Settle.
// A buggy publisher's run ends with one ticket more than the baseline's,
// and is judged as before (endSame is false there).

// firstLandedDespiteSettle says repeat o's window, in a run whose end a
// Settle saw quiet, made the whole of one execution's change, no more,
// where the first execution's window (first's) made none of it and
// nothing changed between the two. One execution's change is a window of
// o's op and identity in the baseline (from a state alike first's start
// to one alike o's end), or, where the baseline made that one write and
// its window held nothing, the baseline's change from its window to its
// end (the world made the whole effect after the call returned, as its
// consumer did). Only where Setup left goroutines running in the
// baseline: they are what carries an effect out late. The caller checks
// that the run ended as the baseline did.
func firstLandedDespiteSettle(tr, baseTr *Trace, o, first *Operation, baseWin map[string][2]string, baseEnd string, alike func(a, b string) bool) bool {
	if !tr.endSettled || baseTr == nil || !baseTr.worldLive || baseEnd == "" || first.effect() == nil || o.effect() == nil || first.Overlapped || o.Overlapped {
		return false
	}
	fb, fa := first.stateWindow()
	ob, oa := o.stateWindow()
	if fb == "" || fa == "" || ob == "" || oa == "" || !alike(fb, fa) || !alike(fa, ob) || alike(ob, oa) {
		return false
	}
	prefix := o.Name + "\x00" + o.Identity + "\x00"
	for wk, w := range baseWin {
		if !strings.HasPrefix(wk, prefix) || w[0] == "" || w[1] == "" || !alike(fb, w[0]) {
			continue
		}
		if w[0] != w[1] && alike(oa, w[1]) || alike(w[0], w[1]) && alike(oa, baseEnd) && soleWrite(baseTr) {
			return true
		}
	}
	return false
}

// settledLateNote says why repeat o was not judged where the first
// execution's effect landed in its window despite the Settle
// (firstLandedDespiteSettle).
func settledLateNote(o *Operation, first string) string {
	when := "before the run's end was read"
	if o.stateSettled() {
		when = "after the Settle said the world was quiet, just before the repeat's window opened"
	}
	return fmt.Sprintf("%s (a repeat of %s) was not judged: %s's window held no change, and the repeat's window made the change one execution made in the baseline, no more: %s's effect landing late, %s, and the run ended as the baseline did. The Settle let that effect through (a count it reads that lags behind the work queued, such as a consumer's pending count read before the broker counted the message), so the end, read after the same Settle, cannot show whether the repeat set a second effect going; make the Settle wait for all the work the calls set going (testkit.SettleUntil) for the suite to judge the repeat",
		o.ID, o.Name, first, first, when)
}

// The same leak the other way: a repeat's window, opened and closed once
// the Settle saw the world quiet, held nothing, and the repeat was
// absorbed ("state unchanged"), while its own message, stored and not yet
// counted, became a second ticket after the window closed: the run's end,
// read after the same Settle, held two tickets against the baseline's
// one, and the buggy publisher passed the scenario (the model of rtU #5,
// lagBroker, its sequential second delivery on every run). Or the Settle
// let the end through before anything landed: the end held no ticket, the
// baseline's one (the buggy JetStream publisher, 10 scenarios in 90
// suites under load). Such a repeat is not judged: the end shows that the
// Settle said quiet while work was pending, and a window the same Settle
// closed shows nothing about what the repeat set going.

// settleLetThrough returns the note for repeat o, whose window a Settle
// opened and closed (stateSettled) on no change, where the run's end,
// read after the Settle, says the Settle let work through, and "" where
// it does not: the end holds one more copy of what one execution of o's
// call added in the baseline, beside all the baseline's end holds
// (oneMoreCopy; where the baseline made that one write, its change from
// its window on counts, as copiedAfter's does); or this run started where
// the baseline did and ended there, where the baseline's did not (none
// of the writes' effects landed). alike compares two states as the
// end-state judging does.
func settleLetThrough(tr, baseTr *Trace, o, first *Operation, baseWin map[string][2]string, end, baseEnd string, views *stateViews, alike func(a, b string) bool) string {
	if !tr.endSettled || !o.stateSettled() || baseTr == nil || end == "" || baseEnd == "" || end == baseEnd {
		return ""
	}
	if endHoldsACopyMore(baseTr, o, baseWin, end, baseEnd, views) {
		return fmt.Sprintf("holds one more copy of what one execution of %s added in the baseline, beside all the baseline's end holds (%s): an effect landed after the Settle said the world was quiet, the repeat's landing after its window closed or the world's, and the suite cannot tell which", o.Name, describeChange(baseEnd, end, maxChange))
	}
	if nothingLandedSettled(tr, baseTr, end, baseEnd, alike) {
		return fmt.Sprintf("holds none of what the baseline's run changed (%s): what the calls set going had not landed when the Settle said the world was quiet, so a window the same Settle closed on no change does not show that the repeat set nothing going", describeChange(baseEnd, end, maxChange))
	}
	return ""
}

// nothingLandedSettled says run tr, whose end a Settle saw quiet, started
// where the baseline did and ended there, where the baseline's did not:
// none of the effects of its writes is in its end. Two deliveries of the
// keyed publisher at once, whose calls overlapped, were counted as a
// duplicate_write on such an end ("1 → 0 entries, removed": the Settle
// read the consumer's counts before the server counted the message; 2
// suites of 90 under load), the red team's rtU #1 with a Settle. Less
// than one delivery's effect is no second one, nor proof there is none.
func nothingLandedSettled(tr, baseTr *Trace, end, baseEnd string, alike func(a, b string) bool) bool {
	if !tr.endSettled || baseTr == nil || end == "" || baseEnd == "" || end == baseEnd {
		return false
	}
	s, r := startOf(baseTr), startOf(tr)
	return s != "" && r != "" && alike(r, s) && alike(end, r) && !alike(baseEnd, s)
}

// nothingLandedNote says why overlapped repeat o was not judged
// (nothingLandedSettled); change is the end's difference from the
// baseline's.
func nothingLandedNote(o *Operation, change string) string {
	if change != "" {
		change = " (" + change + ")"
	}
	return fmt.Sprintf("%s (a repeat of %s) was not judged: its calls overlapped, and the run's end, read once the Settle said the world was quiet, holds none of what the baseline's run changed%s: what the calls set going had not landed, so the end shows no second effect, nor that there was none. The Settle lets such work through (a count it reads that lags behind the work queued, such as a consumer's pending count read before the broker counted the message); make it wait for all the work the calls set going (testkit.SettleUntil) for the suite to judge the repeat",
		o.ID, o.Name, change)
}

// settleLetThroughNote says why repeat o was not judged; what is
// settleLetThrough's account of the end.
func settleLetThroughNote(o *Operation, what string) string {
	return fmt.Sprintf("%s (a repeat of %s) was not judged: its window, opened and closed once the Settle said the world was quiet, held no change, but the run's end, read after the same Settle, %s. The Settle lets such work through (a count it reads that lags behind the work queued, such as a consumer's pending count read before the broker counted the message); make it wait for all the work the calls set going (testkit.SettleUntil) for the suite to judge the repeat",
		o.ID, o.Name, what)
}

// endHoldsACopyMore says the end holds one more copy of what one
// execution of o's call added in the baseline, beside all the baseline's
// end holds (oneMoreCopy); where the baseline made that one write, its
// change from its window on counts, as copiedAfter's does.
func endHoldsACopyMore(baseTr *Trace, o *Operation, baseWin map[string][2]string, end, baseEnd string, views *stateViews) bool {
	if baseTr == nil || end == "" || baseEnd == "" || end == baseEnd {
		return false
	}
	prefix := o.Name + "\x00" + o.Identity + "\x00"
	for wk, w := range baseWin {
		if !strings.HasPrefix(wk, prefix) {
			continue
		}
		if oneMoreCopy(baseEnd, end, w, views) || w[0] != "" && soleWrite(baseTr) && oneMoreCopy(baseEnd, end, [2]string{w[0], baseEnd}, views) {
			return true
		}
	}
	return false
}

// settledLateDupNote is the finding's note where repeat o's window held
// the first execution's late effect (firstLandedDespiteSettle) and the
// end holds one more copy than the baseline's: the window's change is not
// the repeat's, and the finding quotes the end. A buggy publisher's
// finding said "the repeat changed the state: 0 → 1 entry", the first's
// ticket; its own landed after its window.
func settledLateDupNote(first, windowChange string) string {
	return fmt.Sprintf("in its window the world carried out what %s set going (%s), after the Settle said the world was quiet, so this compares the end state with what one delivery left", first, clip(windowChange, maxChange/2))
}
