package render

import (
	"fmt"
	"strings"

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
	return fmt.Sprintf("schedule %s: %s (s = start, f = finish)", res.Schedule, res.Legend)
}

// scheduleLegends maps each schedule scenario's name to its legend line,
// for the findings that name the scenario.
func scheduleLegends(r *runtime.Report) map[string]string {
	out := map[string]string{}
	for _, res := range scenarios(r) {
		if l := legendLine(res); l != "" {
			out[res.Scenario] = l
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
	c := countKinds(r)
	var parts []string
	if c.faults > 0 {
		fired := fmt.Sprintf("%d of %d planned faults fired", c.fired, c.faults)
		switch {
		case c.fired == c.faults && c.faults == 1:
			fired = "the fault fired"
		case c.fired == c.faults:
			fired = fmt.Sprintf("all %d faults fired", c.faults)
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", plural(c.faults, "fault scenario"), fired))
	}
	switch {
	case c.deliveries == 1:
		parts = append(parts, "1 duplicate delivery")
	case c.deliveries > 1:
		parts = append(parts, fmt.Sprintf("%d duplicate deliveries", c.deliveries))
	}
	if c.schedules > 0 {
		parts = append(parts, plural(c.schedules, "schedule"))
	}
	if c.other > 0 {
		parts = append(parts, plural(c.other, "other scenario"))
	}
	if len(parts) == 0 {
		return "no other scenario"
	}
	return strings.Join(parts, ", ")
}
