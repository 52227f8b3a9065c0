package testkit

import (
	"fmt"
	"strings"

	"github.com/agentidem/agentidem-go/runtime"
)

// Summary renders a report as the readable text go test -v prints:
// scenarios run, faults fired, then every finding with its op, identity,
// scenario and replay line.
func Summary(r *runtime.Report) string {
	var b strings.Builder
	fired := 0
	for _, res := range r.Results {
		if res.FaultFired {
			fired++
		}
	}
	verdict := "SAFE"
	switch {
	case !r.BaselineSucceeded:
		verdict = "BASELINE FAILED"
	case !r.Safe:
		verdict = "UNSAFE"
	}
	fmt.Fprintf(&b, "agentidem %s: %s — baseline %s, %d scenarios (%d faults fired), %d unsafe, %d inconclusive, %d agent runs, %s\n",
		r.Name, verdict, okWord(r.BaselineSucceeded), len(r.Results), fired, r.UnsafeCount, r.InconclusiveCount, r.AgentRuns, r.Duration.Round(1000))
	if r.BaselineFailure != "" {
		fmt.Fprintf(&b, "  baseline failure: %s\n", r.BaselineFailure)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %-7s %-22s %s\n", f.Severity, f.Code, f.Scenario)
		fmt.Fprintf(&b, "          %s\n", f.Message)
		if len(f.Ops) > 0 || len(f.Identities) > 0 {
			fmt.Fprintf(&b, "          ops: %s  identities: %s\n", strings.Join(f.Ops, ", "), strings.Join(f.Identities, ", "))
		}
		fmt.Fprintf(&b, "          replay: %s\n", f.Replay)
	}
	return strings.TrimRight(b.String(), "\n")
}

func okWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "failed"
}
