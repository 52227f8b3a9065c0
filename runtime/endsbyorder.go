package runtime

import "fmt"

// Without testkit.Outcome, the suite looks for no order_variant_outcome:
// what must not depend on the order of parallel calls is the user's to
// say, since a State snapshot holds what may (ids a sink numbers as
// calls land, the order of a log). But a loop that pairs the answers of
// parallel calls with the calls in the order they arrive commented on the
// wrong tickets in one schedule and passed with State alone, the
// schedules' ends telling the two worlds apart and the report saying
// nothing (red team rS #2c). Where the schedules' State ends are other
// worlds (not one world under other names, sameWorld), the report now
// says so, and names two schedules to compare: a note, no finding.

// endsByOrderNote returns the note for the schedules run so far
// (scheduledResults), or "" where they ended in one world, where Outcome
// is given (then the schedules are compared as outcomes), or without
// State.
func (s *Suite) endsByOrderNote() string {
	if s.cfg.outcome != nil || s.cfg.state == nil || len(s.scheduledResults) < 2 {
		return ""
	}
	first := s.scheduledResults[0]
	if first.Trace == nil || first.Trace.end == "" {
		return ""
	}
	differ := 0
	var witness *Result
	for _, r := range s.scheduledResults[1:] {
		if r.Trace == nil || r.Trace.end == "" || r.Trace.end == first.Trace.end || s.sameWorld(first.Trace.end, first.Trace, r.Trace.end, r.Trace) {
			continue
		}
		differ++
		if witness == nil {
			witness = r
		}
	}
	if witness == nil {
		return ""
	}
	return fmt.Sprintf("%d of %d schedules of the parallel calls ended in another state than %s (State): %s ends with %s; whether the outcome may depend on the order is yours to say, and without testkit.Outcome no order_variant_outcome was looked for: give Outcome what must not depend on it (the snapshot State takes, if all of it), and the schedules are compared; replay them: AGENTIDEM_SCENARIO='%s' and '%s'",
		differ, len(s.scheduledResults), first.Scenario, witness.Scenario, describeChange(first.Trace.end, witness.Trace.end, maxChange), first.Scenario, witness.Scenario)
}
