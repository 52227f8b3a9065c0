package runtime

import "context"

// CanonicalTrace returns the fault-free trace whose call order is the same
// on every run, for comparing an agent's behaviour between runs (golden
// traces): the baseline's for an agent whose calls all come from one
// goroutine, and for an agent with parallel calls the trace of the listed
// schedule (each round's calls in canonical order), which it runs once if
// Parallel has not. ordered is false when no order is reproducible (the
// baseline failed, or the scheduler met a hazard): then only which calls
// each invocation made is. It returns nil before Baseline.
func (s *Suite) CanonicalTrace(ctx context.Context) (tr *Trace, ordered bool) {
	if s.base == nil {
		return nil, false
	}
	if s.callGoroutines < 2 {
		return s.base, true
	}
	if !s.BaselineOK() {
		return s.base, false
	}
	s.cfg.defaults()
	res, sch, err := s.preflight(ctx)
	if err != nil || sch == nil || sch.hazard != "" || res == nil || res.Trace == nil {
		return s.base, false
	}
	return res.Trace, true
}
