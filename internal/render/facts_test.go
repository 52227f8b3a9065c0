package render

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// TestScenarioFactsAsJoined checks scenarioFacts, written into one
// builder, against the list-and-join it replaced, over results with every
// fact on and off: a legend, a fault that fired or did not (with and
// without its note), virtual time, repeats absorbed by one judge or
// several, an agent error, findings of each severity, and control
// characters and invalid UTF-8 to clean.
func TestScenarioFactsAsJoined(t *testing.T) {
	texts := []string{"", "legend 1-2", "note: \x1b[31mred\x1b[0m", "\xff\xfe bad", "é日本"}
	judges := []string{runtime.JudgedByDeclaration, runtime.JudgedByState, runtime.JudgedByEndState, "other"}
	for seed := range 2000 {
		rnd := rand.New(rand.NewPCG(uint64(seed), 18))
		res := &runtime.Result{Legend: texts[rnd.IntN(len(texts))], FaultFired: rnd.IntN(2) == 0, Failed: rnd.IntN(2) == 0}
		if rnd.IntN(3) > 0 {
			res.Fault = &runtime.Fault{Kind: runtime.FaultCrash, Op: "post"}
		}
		if rnd.IntN(3) == 0 {
			res.Clock = runtime.ClockVirtual
		}
		if rnd.IntN(4) > 0 {
			tr := &runtime.Trace{FaultNote: texts[rnd.IntN(len(texts))]}
			for range rnd.IntN(6) {
				o := runtime.Operation{Name: "post"}
				if rnd.IntN(2) == 0 {
					o.Repeat, o.JudgedBy = runtime.RepeatAbsorbed, judges[rnd.IntN(len(judges))]
				}
				tr.Ops = append(tr.Ops, o)
			}
			res.Trace = tr
		}
		for range rnd.IntN(4) {
			sev := runtime.SeverityError
			if rnd.IntN(2) == 0 {
				sev = runtime.SeverityWarning
			}
			res.Findings = append(res.Findings, runtime.Finding{Severity: sev})
		}
		if got, want := scenarioFacts(res), scenarioFactsJoined(res); got != want {
			t.Fatalf("seed %d: scenarioFacts = %q, joined = %q", seed, got, want)
		}
	}
}

// scenarioFactsJoined is scenarioFacts as it was written before, listing the facts and joining them: the oracle of TestScenarioFactsAsJoined.
func scenarioFactsJoined(res *runtime.Result) string {
	var facts []string
	if res.Legend != "" {
		facts = append(facts, res.Legend)
	}
	if fl := faultLabel(res); fl != "" {
		fired := "fired"
		if !res.FaultFired {
			fired = "did not fire"
			if res.Trace != nil && res.Trace.FaultNote != "" {
				fired += ": " + res.Trace.FaultNote
			}
		}
		facts = append(facts, "fault "+fl+" ("+fired+")")
	}
	calls := 0
	if res.Trace != nil {
		calls = len(res.Trace.Ops)
	}
	facts = append(facts, plural(calls, "call"))
	if res.Clock == runtime.ClockVirtual {
		facts = append(facts, "on virtual time")
	}
	if res.Trace != nil {
		// Repeats that had no further effect, and what said so.
		by := map[string]int{}
		var order []string
		for i := range res.Trace.Ops {
			// By index: an Operation is hundreds of bytes, and a copy
			// of each was most of the summary's cost.
			if o := &res.Trace.Ops[i]; o.Repeat == runtime.RepeatAbsorbed {
				if by[o.JudgedBy] == 0 {
					order = append(order, o.JudgedBy)
				}
				by[o.JudgedBy]++
			}
		}
		for _, j := range order {
			facts = append(facts, fmt.Sprintf("%s absorbed (%s)", plural(by[j], "repeat"), judgedWords(j)))
		}
	}
	if res.Failed {
		facts = append(facts, strings.TrimPrefix(failedWords(res), ", "))
	}
	errs, others := 0, 0
	for _, f := range res.Findings {
		if f.Severity == runtime.SeverityError {
			errs++
		} else {
			others++
		}
	}
	if errs > 0 {
		facts = append(facts, plural(errs, "error finding"))
	}
	if others > 0 {
		facts = append(facts, plural(others, "other finding"))
	}
	return clean(strings.Join(facts, ", "))
}
