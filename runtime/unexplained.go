package runtime

import (
	"fmt"
)

// An end the traced calls do not explain. An agent that retries through
// the raw tool instead of its Traced wrapper (if _, err :=
// w.PayTraced(ctx, "o-1", 500); err != nil { w.Pay(ctx, "o-1", 500) })
// pays twice after a lost acknowledgement, and the trace holds one call:
// no repeat, nothing judged, and lost_acknowledgement/pay#1 was SAFE with
// State given, though the world held two payments against the baseline's
// one (red team rtO #3, /tmp/rtO/user/sq TestUntracedRetry). State sees
// it: where a fault scenario's traced writes are the baseline's, each run
// as often, the scenario's end must be the baseline's; one that is not
// holds a change no traced call made. The suite cannot say whose (an
// untraced call of the agent, the world by itself), so the scenario is
// inconclusive, never a plain pass, and its note says what differs.
//
// Only where nothing else may explain the difference:
//   - a fault the agent saw as an error (a lost acknowledgement, a lost
//     request, a failure before the operation, a partial batch failure),
//     in one delivery: a crash and a second delivery run the agent's own
//     untraced code again, which the suite judges otherwise (untraced.go);
//   - the traced writes that took effect (not replayed by their sink) are
//     the baseline's by op, identity and arguments, in the same order: a
//     retried write the sink replayed is no second effect, and a write
//     the fault left undone, or done twice, is the traced calls' own
//     difference, which the repeats' judging reads;
//   - the world started as the baseline's did (the first write's window
//     opened on a state alike the baseline's): a Setup that names each
//     world afresh leaves names no call carries;
//   - the ends can be compared: a Settle saw both worlds quiet, or no
//     change of the baseline's state came from outside its traced writes,
//     and Setup left nothing running or this run's end held still (a
//     database/sql pool's goroutines, which never change the state; the
//     run waits for that only where its end differs from the baseline's,
//     judge.baseEnd). Not an end that merely
//     landed when the agent returned: an agent that gives up after a
//     lost acknowledgement returns before the booking a payments service
//     makes later (TestABookingQueuedBehindAnotherIsInTheEndState), and
//     its end is not the baseline's, which polled until it was;
//   - and the ends differ beyond what two equal runs may (alike: the
//     moments their clocks stamped, a list's order, the names creates
//     made).

// unexplainedEnd returns the note of run tr, a fault scenario whose end
// is end, when that end differs from the baseline's in a way its traced
// calls do not explain, and "" otherwise. alike compares two ends as the
// end-state judging does (judgeRepeatsIn).
func unexplainedEnd(tr, base *Trace, end string, alike func(e, b string) bool) string {
	if base == nil || end == "" || base.end == "" || tr.Fault == nil || !tr.Fired || !seenAsError(tr.Fault.Kind) || tr.Invocations != 1 {
		return ""
	}
	if !(tr.endSettled && base.endSettled) && (len(base.gaps) > 0 || base.worldLive && !tr.endStill) {
		return ""
	}
	if !sameEffects(tr, base) {
		return ""
	}
	if s, b := startOf(tr), startOf(base); s == "" || b == "" || s != b && !alike(s, b) {
		return ""
	}
	if alike(end, base.end) {
		return ""
	}
	a, b := base.end, end
	if holdsClock(a) || holdsClock(b) {
		named := namedIn(tr)
		a, b = withoutClocks(a, named), withoutClocks(b, named)
	}
	change := describeChange(a, b, maxChange)
	if change == "" {
		change = "the same entries, otherwise"
	}
	why := fmt.Sprintf("An untraced call may have (a direct call of a tool that has a Traced wrapper, such as a retry through the raw tool after the injected %s; go tool agentidem-vet reports those), or the world changed by itself", tr.Fault.Kind)
	if settledShort(tr, base, end) {
		why = fmt.Sprintf("The end holds less than the baseline's, each end read once the Settle said the world was quiet, with goroutines Setup started still running: most likely the Settle said so before they carried out what the calls set going (one that reads a queue's counters can, while a worker still holds a job), so that this end was read with part of the effect still on its way; make the Settle wait for the effect itself (testkit.SettleUntil with a condition on the state). An untraced call may also have undone part of it (a direct call of a tool that has a Traced wrapper after the injected %s; go tool agentidem-vet reports those)", tr.Fault.Kind)
	}
	return fmt.Sprintf("the state at the end differs from the baseline's (%s), though the traced writes that took effect are the baseline's, each as many times: no traced call made that difference. %s; the suite cannot judge it, and the scenario is inconclusive (testkit.FailInconclusive fails the test on such a scenario)",
		change, why)
}

// settledShort reports whether end, read after a Settle, holds less than
// the baseline's end, read after one too, in a world where Setup left
// goroutines running: from end to the baseline's, members were only
// added. A worker's ticket that landed after the Settle said quiet (a
// Settle on a NATS consumer's pending counts, which fall to zero as the
// worker takes the message, before it writes) leaves such an end, and the
// note then names the Settle first, not an untraced call (red team rS #2,
// rtu/natspub TestNATSPublishKeyed, 1 run in 36 under load).
func settledShort(tr, base *Trace, end string) bool {
	if !tr.endSettled || !base.endSettled || !base.worldLive {
		return false
	}
	v, b := viewOf(end), viewOf(base.end)
	return v != nil && b != nil && onlyAdded(v, b)
}

// sameEffects reports whether the writes that took effect in tr (not
// replayed, succeeded or landed) are those of base, by op, identity and
// arguments, in the order they began to run: two writes of one entity
// that ran in the other order (a retried call of a parallel batch after
// the other) may leave another last value, which the traced calls
// explain.
func sameEffects(tr, base *Trace) bool {
	a, b := effectsOf(tr), effectsOf(base)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// effectsOf lists the writes of t that took effect, by op, identity and
// arguments, in the order they began to run (execOrder, then Seq).
func effectsOf(t *Trace) []string {
	ops := executedInOrder(t)
	keys := make([]string, len(ops))
	for i, o := range ops {
		keys[i] = o.Name + "\x00" + o.Identity + "\x00" + argsKey(o)
	}
	return keys
}

// startOf returns the state before the first window of tr's writes (the
// world as the agent found it, before its first write), "" when none was
// taken.
func startOf(tr *Trace) string {
	first, start := 0, ""
	for i := range tr.Ops {
		e := tr.Ops[i].effect()
		if e == nil || !e.inCluster || e.clErr != "" || e.before == "" || e.order == 0 {
			continue
		}
		if first == 0 || e.order < first {
			first, start = e.order, e.before
		}
	}
	return start
}
