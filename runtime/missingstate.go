package runtime

import "fmt"

// A write of the baseline that a scenario never made, where the agent
// reported success. ExactlyOnce makes every such write a missing_write.
// Without it the suite checks at-most-once, but where State is given the
// run's end says what the missing write would have left: an end that
// lacks what that write made in the baseline is the work silently dropped,
// not a choice the suite cannot see. A lock taken with SET NX whose answer
// was lost: the retry found the lock taken, by itself, and the agent
// skipped the report and returned nil; the end lacked the report the
// baseline sent, and the scenario was "ok ... 1 repeat absorbed" (red
// team rtT #5).
//
// Only in scenarios where no write was refused: a lost acknowledgement (the
// write ran), a crash and restart, a duplicate delivery. Where a fault
// told the agent that a write did not happen (before_operation_failure, a
// lost request, a batch's conflict), reporting that it could not do the
// work, and returning nil, may be what the agent is meant to do; there the
// end's lack is a note, and testkit.ExactlyOnce demands the write.
//
// missingByState finds, in a scenario whose agent reported success, each
// op of a write of the baseline that the run never called, whose baseline
// execution changed places of the state where the run's end holds what
// was there before that execution, and the baseline's end holds something
// else: the run left them untouched. An op the run called under other
// names (an id the sink made afresh) is left to ExactlyOnce: its calls
// say nothing certain of what is missing. Where the end says what the
// deliveries left (quietEnd: no worker of the world that could still make
// it), it is a missing_write; elsewhere the scenario is inconclusive, with
// a note that names the write and what the end lacks.
func (s *Suite) missingByState(res *Result, tr *Trace, kind string, names renaming, stale map[string]bool, add func(Finding)) {
	base := s.base
	if base == nil || tr.end == "" || base.end == "" || tr.end == base.end {
		return
	}
	called := map[string]bool{} // ops the run called at all
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if stale[o.ID] {
			return // ExactlyOnce's note says what a stale replay means
		}
		called[o.Name] = true
	}
	var views stateViews
	ev, bev := views.of(tr.end), views.of(base.end)
	if ev == nil || bev == nil {
		return
	}
	seen := map[string]bool{}
	var quiet, quietKnown bool
	for i := range base.Ops {
		o := &base.Ops[i]
		if o.Kind != KindWrite || o.Status != StatusSuccess || called[o.Name] || seen[o.Name] || !o.stateSeen() {
			continue
		}
		seen[o.Name] = true
		id := names.identity(o.Identity)
		before, after := o.stateWindow()
		bv := views.of(before)
		places, ok := changedPlaces(bv, views.of(after))
		if !ok {
			continue
		}
		// Where the run's end holds what was there before the
		// baseline's write, and its end holds otherwise: untouched.
		var lacks []place
		for _, p := range places {
			if x, y := ev.at(p), bev.at(p); sameValue(x, bv.at(p)) && !sameValue(x, y) {
				lacks = append(lacks, p)
			}
		}
		if len(lacks) == 0 {
			continue
		}
		there := describeEnds(lacks[:1], ev, bev)
		if !refusesNone(kind) {
			tr.Notes = append(tr.Notes, fmt.Sprintf("%s for identity %s was not made, and the run ended with %s (in the baseline, %s made it), yet the agent reported success: the fault told it that a write did not happen, and giving up may be what it is meant to do; testkit.ExactlyOnce demands every write of the baseline",
				o.Name, id, there, o.ID))
			continue
		}
		if !quietKnown {
			quiet, quietKnown = quietEnd(tr, untracedIn(base, s.cfg.settle != nil), base), true
		}
		if quiet {
			add(Finding{Code: CodeMissingWrite, Severity: SeverityError, Ops: []string{o.Name}, Identities: []string{id},
				Message: fmt.Sprintf("%s for identity %s never took effect, yet the agent reported success, and the run ended with %s (in the baseline, %s made it): the work was silently dropped; return the error, or retry with the same identity until the write is done",
					o.Name, id, there, o.ID)})
			continue
		}
		res.Inconclusive = true
		tr.Notes = append(tr.Notes, fmt.Sprintf("%s for identity %s was not made, yet the agent reported success, and the run ended with %s (in the baseline, %s made it); the suite could not tell whether the world would still make it (it changed the state outside the traced writes in the baseline, or a worker of Setup's was still at work), so the scenario is inconclusive: give a Settle (testkit.SettleOn) that waits for the world, or testkit.ExactlyOnce to demand the write (testkit.FailInconclusive fails the test on such a scenario)",
			o.Name, id, there, o.ID))
	}
}

// refusesNone says whether a scenario of kind refuses no write: every
// write the baseline made could be made in it.
func refusesNone(kind string) bool {
	switch kind {
	case ScenarioLostAck, ScenarioCrashRestart, ScenarioDuplicateSeq, ScenarioDuplicateConcurrent:
		return true
	}
	return false
}
