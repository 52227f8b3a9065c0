package render

import (
	"strconv"

	"github.com/agentidem/agentidem-go/runtime"
)

// legendLine is a schedule scenario's legend as printed under it:
// "schedule s0s1f0f1: s0 = createInvoice#1, s1 = attachInvoice#1", where
// s<i> and f<i> are the start and the finish of call i. "" for a scenario
// without a schedule.
func legendLine(res *runtime.Result) string {
	if res.Legend == "" {
		return ""
	}
	return string(appendLegendLine(nil, res))
}

// appendLegendLine appends the legend line of a scenario with a legend.
func appendLegendLine(p []byte, res *runtime.Result) []byte {
	p = append(p, "schedule "...)
	p = append(p, res.Schedule...)
	p = append(p, ": "...)
	p = append(p, res.Legend...)
	return append(p, " (s = start, f = finish)"...)
}

// scheduleResults maps each schedule scenario's name to the scenario (the
// last of that name), for the findings that name it and print its legend
// line. Never nil, so that Text builds it once, at its first finding.
func scheduleResults(r *runtime.Report) map[string]*runtime.Result {
	out := map[string]*runtime.Result{}
	if r.Baseline != nil && r.Baseline.Legend != "" {
		out[r.Baseline.Scenario] = r.Baseline
	}
	for _, res := range r.Results {
		if res != nil && res.Legend != "" {
			out[res.Scenario] = res
		}
	}
	return out
}

// counts is how many scenarios of each kind ran besides the baseline.
type counts struct{ faults, fired, deliveries, schedules, other int }

func countKinds(r *runtime.Report) counts {
	var c counts
	for _, res := range r.Results {
		switch {
		case res == nil:
		case res.Fault != nil && res.Fault.Kind != runtime.FaultNone: // faultLabel(res) != ""
			c.faults++
			if res.FaultFired {
				c.fired++
			}
		case runtime.Family(res.Kind) == "duplicate_delivery":
			c.deliveries++
		case res.Kind == runtime.ScenarioInterleaving:
			c.schedules++
		default:
			c.other++
		}
	}
	return c
}

// scenarioCounts says what ran besides the baseline, by kind, leaving out
// kinds that did not run: "8 fault scenarios (all 8 faults fired), 2
// duplicate deliveries, 6 schedules". A suite of schedules only does not
// speak of faults.
func scenarioCounts(r *runtime.Report) string {
	return string(appendScenarioCounts(nil, r))
}

// appendScenarioCounts appends scenarioCounts(r) to p, for Text's
// headline, without the strings it was joined from.
func appendScenarioCounts(p []byte, r *runtime.Report) []byte {
	c := countKinds(r)
	start := len(p)
	next := func() {
		if len(p) > start {
			p = append(p, ", "...)
		}
	}
	if c.faults > 0 {
		p = appendPlural(p, c.faults, "fault scenario")
		p = append(p, " ("...)
		switch {
		case c.fired == c.faults && c.faults == 1:
			p = append(p, "the fault fired"...)
		case c.fired == c.faults:
			p = append(p, "all "...)
			p = strconv.AppendInt(p, int64(c.faults), 10)
			p = append(p, " faults fired"...)
		default:
			p = strconv.AppendInt(p, int64(c.fired), 10)
			p = append(p, " of "...)
			p = strconv.AppendInt(p, int64(c.faults), 10)
			p = append(p, " planned faults fired"...)
		}
		p = append(p, ')')
	}
	switch {
	case c.deliveries == 1:
		next()
		p = append(p, "1 duplicate delivery"...)
	case c.deliveries > 1:
		next()
		p = strconv.AppendInt(p, int64(c.deliveries), 10)
		p = append(p, " duplicate deliveries"...)
	}
	if c.schedules > 0 {
		next()
		p = appendPlural(p, c.schedules, "schedule")
	}
	if c.other > 0 {
		next()
		p = appendPlural(p, c.other, "other scenario")
	}
	if len(p) == start {
		p = append(p, "no other scenario"...)
	}
	return p
}
