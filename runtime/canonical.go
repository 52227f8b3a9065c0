package runtime

// CanonicalTrace returns the baseline's trace and whether its call order is
// the same on every run, for comparing an agent's behaviour between runs
// (golden traces). The baseline runs under the listed schedule (each round
// of parallel calls in canonical order), so its order is reproducible unless
// the scheduler met a hazard; then only which calls each invocation made
// is. It returns nil before Baseline.
func (s *Suite) CanonicalTrace() (tr *Trace, ordered bool) {
	if s.base == nil {
		return nil, false
	}
	if s.pre == nil || s.callGoroutines < 2 {
		return s.base, true
	}
	return s.base, s.pre.err == nil && s.pre.sch != nil && s.pre.sch.hazard == ""
}

// PlannedSchedules is how many schedules Interleavings will run (each
// distinct one counted once), for progress displays: 0 for an agent without
// parallel calls, 1 for a replay or when the pre-flight met a hazard, else
// the distinct schedules after reduction, up to the Schedules budget. Call
// it after Parallel.
func (s *Suite) PlannedSchedules() int {
	if !s.BaselineOK() || s.selectErr != nil {
		return 0
	}
	s.cfg.defaults()
	if s.cfg.replaySchedule != "" {
		return 1
	}
	if s.pre == nil {
		return 0
	}
	if s.pre.err != nil || s.pre.sch == nil || s.pre.sch.hazard != "" {
		return 1
	}
	if len(s.pre.sch.shapes) == 0 {
		return 0
	}
	space := 1
	for _, sh := range s.pre.sch.shapes {
		space = capMul(space, sh.space())
	}
	n := min(space, s.cfg.budget)
	if sh := s.cfg.shard; s.cfg.sharded() {
		n = max(0, (n-(sh.Index-1)+sh.Total-1)/sh.Total) // every Total-th (shard.go)
	}
	return n
}
