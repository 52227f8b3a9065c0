package render

import "github.com/agentidem/agentidem-go/runtime"

// baselineWord says how the baseline went, in the same terms as its row:
// "failed" when the agent failed without any fault, "unsafe" when it ran
// but already showed an error finding (a write done twice, a broken
// invariant, dependent calls at once), "inconclusive" when it ran clean
// but what it did is not all known (a goroutine it left running called
// tools after its run ended), else "ok". The header, the HTML tile and the
// baseline's row all use it, so they never disagree. The report's
// inconclusive_count counts fault scenarios only, as in the AgentIdem
// report, so this word is where an inconclusive baseline shows.
func baselineWord(r *runtime.Report) string {
	if !r.BaselineSucceeded && !baselineCutShort(r.Baseline) {
		return "failed"
	}
	if r.Baseline != nil {
		switch scenarioStatus(r.Baseline, true) {
		case statusUnsafe:
			return "unsafe"
		case statusInconclusive:
			return "inconclusive"
		}
	}
	return "ok"
}
