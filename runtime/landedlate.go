package runtime

import (
	"fmt"
	"slices"
	"strings"
)

// A traced write that failed because its answer never came (its deadline
// ran out, the client timed out or was cancelled, the connection dropped)
// may have reached the service all the same, and its effect may land
// after the call returned: a payments API that books a charge 150 ms after
// the request, where the agent's attempt gave up at 40 ms. Its window saw
// nothing (landed does not hold), and the change comes in a gap between
// windows, or after the agent returned, outside every traced write. Where
// a retry of it (the same op, identity and arguments) made the same change
// in its own window, the world holds two effects for one intended: a
// duplicate, in the baseline too.
//
// Before this, the baseline of such an agent (stripe-go without an
// idempotency key, a per-attempt deadline of 40 ms and one retry: one
// delivery, two charges, on every run) read "ok", with a note only, and
// its late change was taken for the world's own (worldAfter, "a worker
// that Setup started"), so that a second delivery's charge, doing the same,
// was absorbed where the run's end had been read before the late charge
// landed: INCONCLUSIVE, a passing test, in 3 runs of 6 (red team rtQ #1,
// /tmp/rtQ/tree/rtq/pay TestLateNoKeyImmediate; #2 TestLateNoKey, the
// baseline "ok" in 9 runs of 10).
//
// The change must be the retry's own, whole (describeChange; or up to the
// names the sink made, sameChangeUpToMadeNames), and it must have begun
// after the failed call returned (gapsAt): a change of other places, or
// of one place among others (a shop's count of events that the retry bumps
// too, beside a booking another call set going), is not the failed call's
// (TestLateEffectOfAnotherWriteIsNotTheFailedCalls,
// TestLateEffectOfSetupIsNotTheFailedFirstCalls). A failed call that
// answered (a declined card, a 409) changed nothing later: its error says
// so.

// lateLanding is a failed write of a trace whose effect landed after it
// returned (lateLandings): tr.Ops[failed] failed, tr.Ops[twin] made the
// same change in its own window, and gap (an index of tr.gaps) holds the
// failed call's.
type lateLanding struct {
	failed, twin, gap int
}

// noAnswer reports whether a tool's error says its answer never came,
// rather than that the service answered no: a deadline or timeout, a
// cancellation, a dropped connection. Only such a call may have reached
// the service and land later.
func noAnswer(err string) bool {
	e := strings.ToLower(err)
	for _, s := range [...]string{"deadline", "timeout", "timed out", "canceled", "cancelled", "eof", "connection reset", "broken pipe"} {
		if strings.Contains(e, s) {
			return true
		}
	}
	return false
}

// unansweredWrite reports whether f is a traced write that failed for want
// of an answer, by itself, and whose window saw nothing land: one whose
// effect may land after it returned.
func unansweredWrite(f *Operation) bool {
	return f.Kind == KindWrite && f.Status == StatusFailed && f.Fault == FaultNone && !f.Replayed && f.IdentityError == "" &&
		f.Error != errNotExecutedCrashed && noAnswer(f.Error) && !landed(f) && !failedTogether(f) && f.execOrder() != 0
}

// retriedAs reports whether s is a call of failed call f's op, identity and
// arguments that made a change of the state in its own window: f's retry.
func retriedAs(f, s *Operation) bool {
	return s.Kind == KindWrite && !s.Replayed && s.Name == f.Name && s.Identity == f.Identity &&
		s.stateSeen() && s.StateChange != "" && (s.Status == StatusSuccess || landed(s)) && argsKey(s) == argsKey(f)
}

// lateLandings returns the failed writes of tr whose effect landed after
// they returned, beside a call of the same op, identity and arguments that
// made that change in its own window; nil for most traces, where no write
// failed unanswered or the state changed in no gap.
func lateLandings(tr *Trace) []lateLanding {
	if tr == nil || len(tr.gaps) == 0 || len(tr.odd().gapsAt) != len(tr.gaps) {
		return nil
	}
	var (
		out   []lateLanding
		views stateViews
		named map[string]bool
		used  []bool // the gaps taken, made once a failed call is looked at
	)
	for i := range tr.Ops {
		f := &tr.Ops[i]
		if !unansweredWrite(f) {
			continue
		}
		if used == nil {
			used = make([]bool, len(tr.gaps))
		}
		found := false
		for j := range tr.Ops {
			s := &tr.Ops[j]
			if j == i || !retriedAs(f, s) {
				continue
			}
			b, a := s.stateWindow()
			for g, gap := range tr.gaps {
				if used[g] || tr.odd().gapsAt[g] <= f.execOrder() || gap[0] == gap[1] {
					continue // begun before f returned, or taken
				}
				same := describeChange(b, a, -1) == describeChange(gap[0], gap[1], -1)
				if !same {
					if named == nil {
						named = namedIn(tr)
					}
					same = sameChangeUpToMadeNames(b, a, gap[0], gap[1], named, nil)
				}
				if same && views.of(gap[0]) != nil {
					used[g], found = true, true
					out = append(out, lateLanding{failed: i, twin: j, gap: g})
					break
				}
			}
			if found {
				break
			}
		}
	}
	return out
}

// withoutLateGaps returns base, the baseline's trace, without the gaps
// that hold a failed call's effect landing late (late): they are the
// agent's doing, not the world's by itself, and a repeat whose window
// makes that change again is not absorbed as the world's (worldAfter,
// which named "a worker that Setup started" where there was none). base
// itself where late is empty; else a copy, the baseline left as it was.
func withoutLateGaps(base *Trace, late []lateLanding) *Trace {
	if len(late) == 0 {
		return base
	}
	cp := *base
	rare := *base.odd()
	cp.rare, cp.gaps, rare.gapsAt = &rare, nil, nil
	for g := range base.gaps {
		if !slices.ContainsFunc(late, func(l lateLanding) bool { return l.gap == g }) {
			cp.gaps = append(cp.gaps, base.gaps[g])
			rare.gapsAt = append(rare.gapsAt, base.odd().gapsAt[g])
		}
	}
	return &cp
}

// lateWhy says, in a duplicate_write finding, how failed call f's effect
// landed: the same change as twin's own, after f returned.
func lateWhy(tr *Trace, l lateLanding) string {
	f, s, g := &tr.Ops[l.failed], &tr.Ops[l.twin], tr.gaps[l.gap]
	return fmt.Sprintf("%s failed with %q, yet its effect landed after it returned: with no traced call in flight the state made the change %s made in its own call (%s)",
		f.ID, clip(f.Error, 120), s.ID, clip(DescribeChange(g[0], g[1]), maxChange/2))
}

// addLateLandings adds to found (the duplicate findings of tr) the failed
// calls whose effect landed late (lateLandings): to the duplicate_write
// of their op and identity where one was made, else in one of their own,
// with the call that made the same change. The failed call is marked the
// duplicate: its effect came second.
func addLateLandings(found []Finding, tr *Trace, late []lateLanding) []Finding {
	for _, l := range late {
		f, s := &tr.Ops[l.failed], &tr.Ops[l.twin]
		f.Repeat, f.JudgedBy = RepeatDuplicate, JudgedByState
		at := slices.IndexFunc(found, func(x Finding) bool {
			return x.Code == CodeDuplicateWrite && len(x.Ops) > 0 && x.Ops[0] == f.Name && len(x.Identities) > 0 && x.Identities[0] == f.Identity
		})
		if at >= 0 {
			x := &found[at]
			if slices.Contains(x.Calls, f.ID) {
				continue
			}
			calls := inTraceOrder(tr, append(slices.Clone(x.Calls), f.ID))
			if x.Message != "" {
				// The count the message began with, and the calls, are
				// the finding's own: they are said again with f.
				old := fmt.Sprintf("%s executed %d times for identity %s (%s)", f.Name, len(x.Calls), f.Identity, strings.Join(x.Calls, ", "))
				if rest, ok := strings.CutPrefix(x.Message, old); ok {
					rest = strings.Replace(rest, fmt.Sprintf(": one effect done %d times", len(x.Calls)), fmt.Sprintf(": one effect done %d times", len(calls)), 1)
					x.Message = fmt.Sprintf("%s executed %d times for identity %s (%s)", f.Name, len(calls), f.Identity, strings.Join(calls, ", ")) + rest
				}
				x.Message += "; and " + lateWhy(tr, l)
			}
			x.Calls = calls
			continue
		}
		calls := inTraceOrder(tr, []string{f.ID, s.ID})
		found = append(found, Finding{Code: CodeDuplicateWrite, Severity: SeverityError, Ops: []string{f.Name}, Identities: []string{f.Identity}, Calls: calls,
			Message: fmt.Sprintf("%s executed 2 times for identity %s (%s): one effect done 2 times (%s; one intended effect, made by both); make the write idempotent at the sink (an idempotency key derived from the work, the same on every retry: idem.Store), or, where its answer did not come, find out whether it landed before retrying",
				f.Name, f.Identity, strings.Join(calls, ", "), lateWhy(tr, l))})
	}
	return found
}

// inTraceOrder sorts ids, calls of tr, in the order of tr.Ops.
func inTraceOrder(tr *Trace, ids []string) []string {
	pos := func(id string) int {
		for i := range tr.Ops {
			if tr.Ops[i].ID == id {
				return i
			}
		}
		return -1
	}
	slices.SortStableFunc(ids, func(a, b string) int { return pos(a) - pos(b) })
	return ids
}

// worldNoteIn is worldNote where the baseline (base) had Setup leave a
// goroutine running (worldLive), which may be a worker carrying out what
// the call queued. Where it had none, the change the baseline went
// through with no call in flight came from no worker: an untraced write of
// the agent's, or an effect landing after its call returned, and the note
// says that (it named "a worker that Setup started" for an agent's own
// charge landing late: red team rtQ #1).
func worldNoteIn(base *Trace, o *Operation, first string) string {
	if base == nil || base.worldLive {
		return worldNote(o, first)
	}
	return fmt.Sprintf("%s's repeat %s was not counted although the state changed while it ran: the change is the one the baseline's state went through after %s, with no traced call in flight and no goroutine of Setup's running (an untraced write of the agent's, or an effect landing after its call returned), and the run ended as the baseline did; give a Settle that waits for such effects (testkit.SettleUntil) for the suite to judge the repeat by its own window", o.Name, o.ID, first)
}

// lateInPlace returns, for each failed write of tr that lateLandings did
// not match (late), a note where its effect may have landed late all the
// same: after it returned, with no traced call in flight, the state changed
// only in places that a call of the same op, identity and arguments changed
// in its own window, but not as that call changed them. A counter does
// this: the retry's window took a balance from nothing to 500, and the
// failed attempt, booked later, took it from 500 to 1000 (an ADD, an
// UPDATE ... SET qty = qty - ?), which is not the retry's change "exactly"
// and was read as the world's (red team rtR #6: idem.Do around a DynamoDB
// ADD, a 40 ms deadline and a retry; every run credited 1000 for one 500
// payment and the suite read SAFE). The suite cannot tell that change
// from another of the same places, so the run is not judged safe on it:
// its scenario is inconclusive, and the note says which call and places.
func lateInPlace(tr *Trace, late []lateLanding) []string {
	if tr == nil || len(tr.gaps) == 0 || len(tr.odd().gapsAt) != len(tr.gaps) {
		return nil
	}
	var (
		out   []string
		views stateViews
	)
	for i := range tr.Ops {
		f := &tr.Ops[i]
		if !unansweredWrite(f) || slices.ContainsFunc(late, func(l lateLanding) bool { return l.failed == i }) {
			continue
		}
		note := ""
		for j := range tr.Ops {
			s := &tr.Ops[j]
			if j == i || !retriedAs(f, s) {
				continue
			}
			b, a := s.stateWindow()
			own, ok := changedPlaces(views.of(b), views.of(a))
			if !ok || len(own) == 0 {
				continue
			}
			for g, gap := range tr.gaps {
				if tr.odd().gapsAt[g] <= f.execOrder() || gap[0] == gap[1] ||
					slices.ContainsFunc(late, func(l lateLanding) bool { return l.gap == g }) {
					continue
				}
				moved, ok := changedPlaces(views.of(gap[0]), views.of(gap[1]))
				if !ok || len(moved) == 0 {
					continue
				}
				inOwn := true
				names := make([]string, 0, len(moved))
				for _, p := range moved {
					if !slices.ContainsFunc(own, func(q place) bool { return q.key() == p.key() }) {
						inOwn = false
						break
					}
					names = append(names, p.name())
				}
				if !inOwn {
					continue
				}
				note = fmt.Sprintf("%s failed with %q, and after it returned, with no traced call in flight, the state changed in %s, which %s (the same op, identity and arguments) changed in its own call, though not as it did (%s): that may be %s's effect landing late (a counter or balance the service added to twice), or the world's; the suite cannot tell, so this run is not judged safe on it: make the write idempotent at the sink (an idempotency key the service honours, a conditional write), or find out whether the first attempt landed before retrying",
					f.ID, clip(f.Error, 120), clip(strings.Join(names, ", "), 160), s.ID, clip(DescribeChange(gap[0], gap[1]), maxChange/2), f.ID)
				break
			}
			if note != "" {
				break
			}
		}
		if note != "" {
			out = append(out, note)
		}
	}
	return out
}
