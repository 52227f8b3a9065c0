package testkit

import (
	"fmt"
	"strings"

	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/agentidem/agentidem-go/runtime"
)

// reportResult prints the findings of one scenario in its subtest, each
// problem once: the first scenario that shows a problem prints it in full;
// a later one fails too, with one line that points back and replays it
// (printed maps a problem's GroupKey to the scenario that printed it).
func reportResult(t TB, res *runtime.Result, fail bool, printed map[string]string) {
	t.Helper()
	for _, f := range res.Findings {
		key := f.GroupKey()
		var line string
		if first, ok := printed[key]; ok && first != f.Scenario {
			line = fmt.Sprintf("[%s] %s, as in %s (printed there)\n    replay: %s", f.Code, about(f), first, f.Replay)
		} else {
			printed[key] = f.Scenario
			line = fmt.Sprintf("[%s] %s\n    replay: %s", f.Code, f.Message, f.Replay)
			if f.Stack != "" {
				line += "\n" + indent(f.Stack, "    ")
			}
		}
		if res.Legend != "" && !strings.Contains(f.Message, res.Legend) {
			line += fmt.Sprintf("\n    schedule %s: %s (s = start, f = finish)", res.Schedule, res.Legend)
		}
		if fail && f.Severity == runtime.SeverityError {
			t.Errorf("%s", line)
		} else {
			t.Logf("%s: %s", f.Severity, line)
		}
	}
}

// about names what a finding is about: its ops and identities.
func about(f runtime.Finding) string {
	s := strings.Join(f.Ops, ", ")
	if len(f.Identities) > 0 {
		s += " for identity " + strings.Join(f.Identities, ", ")
	}
	if s == "" {
		s = firstLine(f.Message)
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// testSummary is the summary go test prints after the scenarios: the
// verdict and the scenarios, then one line per problem naming the
// scenarios that show it. The findings themselves were printed in the
// subtests, once each, and are not printed again.
func testSummary(rep *runtime.Report) string {
	brief := *rep
	brief.Findings, brief.Problems = nil, nil
	var b strings.Builder
	b.WriteString(strings.TrimRight(render.Text(&brief, render.FoldPlainOK()), "\n"))
	if len(rep.Problems) > 0 {
		fmt.Fprintf(&b, "\nproblems (each printed in full under the first scenario that shows it):")
		for _, p := range rep.Problems {
			var where []string
			for _, in := range p.SeenIn {
				where = append(where, in.Scenario)
			}
			fmt.Fprintf(&b, "\n  %-7s %s %s: %s", p.Severity, p.Code, about(p), strings.Join(where, ", "))
		}
	}
	return b.String()
}
