package testkit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/agentidem/agentidem-go/runtime"
)

// testSummaryFmt is testSummary as it was written with fmt, the oracle of
// TestSummaryAsWithFmt.
func testSummaryFmt(rep *runtime.Report, folded bool) string {
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
			if folded && len(p.SeenIn) > 1 && p.SeenIn[1].Replay != "" {
				fmt.Fprintf(&b, "\n          replay %s (each scenario named here replays alike): %s", p.SeenIn[1].Scenario, p.SeenIn[1].Replay)
			}
		}
	}
	return b.String()
}

// TestSummaryAsWithFmt holds testSummary, written without fmt, to the
// bytes the fmt version wrote: the ten-write suite's report, and problems
// of every shape the lines depend on (severities shorter, as long as and
// longer than the padding, with runes of more than one byte; ops and
// identities none, one empty, several; messages of one and more lines,
// empty; seen in no scenario, one, several, with and without a replay
// line), folded or not.
func TestSummaryAsWithFmt(t *testing.T) {
	reports := []*runtime.Report{tenWriteReport(t), {Name: "empty"}}
	var problems []runtime.Finding
	severities := []runtime.Severity{runtime.SeverityError, runtime.SeverityWarning, "info", "", "sévère", "ünïcödé!", "a-much-longer-one"}
	opss := [][]string{nil, {""}, {"", ""}, {"post"}, {"post", "refund <x>"}}
	idss := [][]string{nil, {""}, {`"entry-0"`}, {"a", "b, c"}}
	messages := []string{"", "one line", "first line\nsecond line", "\nstarts with a newline", "ends with one\n"}
	seens := [][]runtime.Occurrence{nil,
		{{Scenario: "crash_restart/post#1", Replay: "go test -run '^T$/^crash_restart$/^post#1$'"}},
		{{Scenario: "a"}, {Scenario: "b"}},
		{{Scenario: "a", Replay: "r1"}, {Scenario: "b/c", Replay: "go test -run 'x' ./p"}, {Scenario: "d"}}}
	for i := range len(severities) * len(opss) * len(idss) {
		problems = append(problems, runtime.Finding{
			Severity:   severities[i%len(severities)],
			Code:       []string{"duplicate_write", "", "x y"}[i%3],
			Ops:        opss[(i/len(severities))%len(opss)],
			Identities: idss[(i/len(severities)/len(opss))%len(idss)],
			Message:    messages[i%len(messages)],
			SeenIn:     seens[(i/3)%len(seens)],
		})
	}
	reports = append(reports, &runtime.Report{Name: "problems", Problems: problems})
	withProblems := *reports[0]
	withProblems.Problems = append(withProblems.Problems, problems...)
	reports = append(reports, &withProblems)
	for _, rep := range reports {
		for _, folded := range []bool{true, false} {
			got, want := testSummary(rep, folded, nil), testSummaryFmt(rep, folded)
			if got != want {
				t.Errorf("report %q, folded %v: testSummary wrote\n%s\nthe fmt version\n%s", rep.Name, folded, got, want)
			}
		}
	}
}
