package runtime

import (
	"fmt"
	"slices"
	"strings"
)

// staleReplays returns the IDs of the writes of tr that their sink
// replayed (MarkReplayed) from a key that no execution of the run made:
// no call of the same op and identity executed in the run (its tool ran,
// neither stopped by a fault before it nor by a crash, nor itself a
// replay). The sink's key came from before the run: Setup did not give a
// fresh world (an idempotency table it does not reset, a store made once
// for the test, a key an earlier test or run completed within its TTL).
// Such a write never executed in the run, so nothing of it was tested:
// its retries, redeliveries and crashes all replay the same stored
// answer, and the suite said SAFE, "all faults fired", with nothing
// executed in any run, the baseline included (a red team's, rtM P3: a
// PostgreSQL idem table left out of Setup's TRUNCATE). A replay that
// follows the run's own execution of the work (the retry after a lost
// acknowledgement, the second delivery, the restart after a crash) is the
// tested case, and is not one of these.
//
// A replayed write of an op that the run also called untraced
// (Trace.Unattributed) is not one of these: that execution may have made
// the key (untracedKey). The result is inconclusive, with a note of its
// own.
//
// When there are any, the run's trace gets a note and the result is
// inconclusive. It returns nil when there are none.
func staleReplays(res *Result, tr *Trace, noSetup bool) map[string]bool {
	var stale map[string]bool
	for i := range tr.Ops {
		// Not a call whose response the lost_response fault dropped:
		// that request reached the service in this run, and the replay
		// is its client's retry of it, the tested case (rtS #2's keyed
		// tool was told stale, and its scenario not fired).
		if o := &tr.Ops[i]; o.Kind == KindWrite && o.Replayed && o.Status == StatusSuccess && o.Fault != FaultLostResponse {
			if stale == nil {
				stale = map[string]bool{}
			}
			stale[o.ID] = true
		}
	}
	if stale == nil {
		return nil
	}
	ran := map[string]bool{}
	for i := range tr.Ops {
		if o := &tr.Ops[i]; o.Kind == KindWrite && executedHere(o) {
			ran[o.Name+"\x00"+o.Identity] = true
		}
	}
	var which, hidden []string
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if !stale[o.ID] {
			continue
		}
		if ran[o.Name+"\x00"+o.Identity] {
			delete(stale, o.ID)
			continue
		}
		if slices.Contains(tr.odd().unattributedOps, o.Name) {
			// A call of the op went untraced in this run: its
			// execution may have made the key, and the world may be
			// fresh (untracedKey).
			delete(stale, o.ID)
			hidden = append(hidden, fmt.Sprintf("%s (identity %s)", o.ID, o.Identity))
			continue
		}
		which = append(which, fmt.Sprintf("%s (identity %s)", o.ID, o.Identity))
	}
	if len(hidden) > 0 {
		res.Inconclusive = true
		tr.Notes = append(tr.Notes, untracedKey(hidden))
	}
	if len(stale) == 0 {
		return nil
	}
	res.Inconclusive = true
	verb := "was replayed by its"
	if len(which) > 1 {
		verb = "were replayed by their"
	}
	tr.Notes = append(tr.Notes, fmt.Sprintf("%s %s sink (MarkReplayed) from a key that no execution of this run made: %s, so the write never executed in this run and nothing of it was tested",
		strings.Join(which, ", "), verb, notFresh(noSetup)))
	return stale
}

// untracedKey is the note on writes (which) that their sink replayed
// from a key no traced execution of the run made, when calls of the same
// op were made in the run and not traced (Trace.Unattributed: an HTTP
// handler or a server's goroutine calling with a context of its own while
// two deliveries were in flight, so the harness could not tell whose the
// call was). Such a call executed, in this run: the key may be its own,
// and nothing says the world Setup gave was not fresh. The note said it
// was, and told a user whose Setup makes a new idem store for every
// scenario to reset it (red team rtY #1: a webhook handler keyed at the
// sink, duplicate_delivery/concurrent). What the harness cannot see is
// the execution, and what makes it visible is the run carried to the
// handler.
func untracedKey(which []string) string {
	verb := "was replayed by its"
	if len(which) > 1 {
		verb = "were replayed by their"
	}
	return fmt.Sprintf("%s %s sink (MarkReplayed) from a key that no traced execution of this run made, and a call of the same op in this run was not traced (its context_detached warning says which and why): that execution may have made the key, so the harness cannot tell whether this replay follows an execution of this run or a key left from before, and the write was not tested here; carry the run to the code that makes the call: put runtime.Token(ctx) in the request (a header, a message's metadata) and take the handler's context from runtime.Resolve(ctx, token), so that its calls are traced as the delivery's",
		strings.Join(which, ", "), verb)
}

// notFresh says why a sink replayed a key no execution of the run made:
// the world was not fresh. With no Setup given, no Setup is to blame:
// every scenario ran in the world the one before it left (red team rtV
// #11, whose notes blamed "the world Setup gave").
func notFresh(noSetup bool) string {
	if noSetup {
		return "no Setup was given, so every scenario ran in the world the one before it left, its idempotency keys and stored results included; give testkit.Setup a function that builds a fresh world, a new idem store with it"
	}
	return "the world Setup gave was not fresh (an idempotency key or stored result left by an earlier run or test, within its TTL: reset the idem store in Setup, as the rest of the world)"
}

// executedHere reports whether write o's tool ran in the run: not a
// replay, nor a call a fault failed before the tool (a lost request, a
// failure before the operation, a partial batch's conflict), nor one the
// crash of its invocation stopped.
func executedHere(o *Operation) bool {
	switch o.Fault {
	case FaultBefore, FaultLostRequest, FaultConflict:
		return false
	}
	return !o.Replayed && o.Status != StatusRunning && o.Error != errNotExecutedCrashed
}

// staleFault says why the fault of sc, which fired, tested nothing: the
// call it fired on was a stale replay (staleReplays), whose lost answer
// or crash is followed by one more replay of the same stored answer, no
// retry of an effect. "" otherwise.
func staleFault(tr *Trace, sc Scenario, stale map[string]bool) string {
	if len(stale) == 0 || sc.Fault.Kind == FaultNone || !tr.Fired {
		return ""
	}
	for i := range tr.Ops {
		if o := &tr.Ops[i]; o.Fault != FaultNone && stale[o.ID] {
			return fmt.Sprintf("on %s, which its sink replayed from a key no execution of this run made (see the note): it tested no retry of an effect, so it is counted as not fired", o.ID)
		}
	}
	return ""
}
