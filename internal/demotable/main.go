// Command demotable prints the table that ends scripts/demo.sh: one row per
// agent (its test) of the bundled examples, with the example, the agent,
// whether the example means that agent to be buggy or fixed, the verdict,
// the error findings by code, and the report's page. A test that ran its
// suite more than once (to show the verdict is the same every run) is one
// row per verdict its runs had, which says how many runs it stands for.
//
//	go run ./internal/demotable .agentidem/reports
//
// The directory is the AGENTIDEM_REPORT_DIR of go test ./examples/...: the
// <Test>.json reports of each example in examples/<example>/ below it, and,
// when rendered, <Test>.html beside them. It exits 1 when a report cannot be read, or when
// an agent's verdict is not what its test name promises (a "buggy" agent
// reported SAFE, a "fixed" one reported anything but SAFE).
package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/agentidem/agentidem-go/runtime"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: demotable REPORTS_DIR")
		os.Exit(2)
	}
	rows, err := load(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "demotable: %v\n", err)
		os.Exit(1)
	}
	if bad := write(os.Stdout, rows); bad > 0 {
		os.Exit(1)
	}
}

// row is one agent's line of the table: runs is how many reports of one
// test it stands for (a test that runs its suite 20 times, to show the
// verdict is the same every run, leaves <Test>.json and <Test>_02.json to
// <Test>_20.json).
type row struct {
	example, agent, expected, verdict, findings, report string
	runs                                                int
}

// load reads every <Test>.json below dir (AGENTIDEM_REPORT_DIR=dir puts
// an example's reports in dir/examples/<example>/), sorted by path: by
// example, then test.
func load(dir string) ([]row, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) == ".json" {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no reports below %s", dir)
	}
	sort.Strings(files)
	var rows []row
	for _, f := range files {
		rep, err := runtime.ReadReport(f)
		if err != nil {
			return nil, err
		}
		page := strings.TrimSuffix(f, ".json") + ".html"
		if _, err := os.Stat(page); err != nil {
			page = f
		}
		r := row{
			example:  filepath.Base(filepath.Dir(f)),
			agent:    rep.Name,
			expected: expected(rep.Name),
			verdict:  render.Verdict(rep),
			findings: findings(rep),
			report:   page,
			runs:     1,
		}
		// The runs of one test that ended alike are one row; a run that
		// ended otherwise keeps a row of its own.
		if i := slices.IndexFunc(rows, func(o row) bool {
			return o.example == r.example && o.agent == r.agent && o.verdict == r.verdict && o.findings == r.findings
		}); i >= 0 {
			rows[i].runs++
			continue
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// expected reads what an example's test says of its agent: a test named
// "...IsCaught", "...Bug...", "...ButNot..." or "...Drops..." is about a buggy
// agent; one named "...Passes", "...IsSafe", "...Fixed..." or
// "...ExactlyOne..." about a fixed one. Other tests (a verdict that must be
// the same on every run, a refusal) promise neither: "-".
func expected(test string) string {
	name := strings.ToLower(test)
	for _, w := range []string{"caught", "bug", "butnot", "drops"} {
		if strings.Contains(name, w) {
			return "buggy"
		}
	}
	for _, w := range []string{"passes", "safe", "fixed", "exactlyone"} {
		if strings.Contains(name, w) {
			return "fixed"
		}
	}
	return "-"
}

// asExpected says whether a verdict keeps the test name's promise.
func asExpected(r row) bool {
	switch r.expected {
	case "buggy":
		return r.verdict != render.VerdictSafe
	case "fixed":
		return r.verdict == render.VerdictSafe
	}
	return true
}

// findings counts the report's error findings by code, most frequent
// first: "9 invariant_failed, 6 duplicate_write"; "-" when there is none.
func findings(rep *runtime.Report) string {
	count := map[string]int{}
	add := func(res *runtime.Result) {
		if res == nil {
			return
		}
		for _, f := range res.Findings {
			if f.Severity == runtime.SeverityError {
				count[f.Code]++
			}
		}
	}
	add(rep.Baseline)
	for _, res := range rep.Results {
		add(res)
	}
	codes := make([]string, 0, len(count))
	for c := range count {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool {
		if count[codes[i]] != count[codes[j]] {
			return count[codes[i]] > count[codes[j]]
		}
		return codes[i] < codes[j]
	})
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d %s", count[c], c)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// write prints the table and a closing line, and returns how many agents
// broke their test name's promise (each marked "!" in the table).
func write(w io.Writer, rows []row) int {
	head := row{"example", "agent", "expected", "verdict", "findings (error)", "report", 0}
	all := append([]row{head}, rows...)
	var wd [5]int
	bad, buggy, fixed := 0, 0, 0
	for i := range all {
		if r := &all[i]; r.runs > 1 {
			r.agent = fmt.Sprintf("%s (%d runs)", r.agent, r.runs)
			r.report += fmt.Sprintf(" (and %d more)", r.runs-1)
		}
	}
	for _, r := range all {
		for i, s := range []string{r.example, r.agent, r.expected, r.verdict, r.findings} {
			wd[i] = max(wd[i], len(s))
		}
	}
	for i, r := range all {
		mark := " "
		if i > 0 {
			if !asExpected(r) {
				mark, bad = "!", bad+1
			}
			switch r.expected {
			case "buggy":
				buggy++
			case "fixed":
				fixed++
			}
		}
		fmt.Fprintf(w, "%s %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", mark,
			wd[0], r.example, wd[1], r.agent, wd[2], r.expected, wd[3], r.verdict, wd[4], r.findings, r.report)
	}
	fmt.Fprintf(w, "\n%d agents: %d meant buggy, %d meant fixed, %d promise neither; ", len(rows), buggy, fixed, len(rows)-buggy-fixed)
	if bad == 0 {
		fmt.Fprintln(w, "every buggy one is caught and every fixed one is SAFE")
	} else {
		fmt.Fprintf(w, "%d not as their test name says (marked !)\n", bad)
	}
	return bad
}
