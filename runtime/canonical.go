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
