package render

import "github.com/agentidem/agentidem-go/runtime"

// baselineWord says how the baseline went, in the same terms as its row:
// "failed" when the agent failed without any fault, "unsafe" when it ran
// but already showed an error finding (a write done twice, a broken
// invariant, dependent calls at once), else "ok". The header, the HTML
// tile and the baseline's row all use it, so they never disagree.
func baselineWord(r *runtime.Report) string {
	switch {
	case !r.BaselineSucceeded:
		return "failed"
	case r.Baseline != nil && scenarioStatus(r.Baseline, true) == statusUnsafe:
		return "unsafe"
	}
	return "ok"
}
