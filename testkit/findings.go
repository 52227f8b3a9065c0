package testkit

import (
	"io"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/agentidem/agentidem-go/runtime"
)

// reportResult prints the findings of one scenario in its subtest, each
// problem once: the first scenario that shows a problem prints it in full;
// a later one, when it has a subtest, fails too, with one line that points
// back and replays it (printed maps a problem's GroupKey to the scenario
// that printed it).
//
// Under a recorder (no subtest yet, subtests.go), a scenario whose every
// error is a problem an earlier scenario's subtest fails with gets no
// subtest of its own: it would print one line that points back, and cost
// a subtest (a goroutine and its hand-offs) for it. The summary names it
// under the problem, with a replay line (testSummary).
func reportResult(t TB, res *runtime.Result, fail bool, printed map[string]string) {
	if !plainLines(t) {
		t.Helper()
	}
	if r, ok := t.(*recorder); ok {
		// Only whether the report fails is kept (subtests.go): the
		// lines are written when its subtest is made, not now. A
		// problem fails the first scenario that shows it as an error
		// (one that showed it as a warning had no subtest for it).
		//
		// A problem's kind (kindKey: its code and ops, not its
		// identities) is what decides: a scenario whose errors are all
		// of kinds an earlier subtest failed with, for other identities
		// too, gets no subtest. A crash after the ten-write agent's
		// k-th write repeats the k writes before it, each a problem of
		// its own identity, one new in each crash: a subtest for each
		// printed ten messages that differ only in their identity (one
		// fix, at post's sink) and cost 165 of the suite's 1,230 µs
		// (TestMeasureSuite, GOMAXPROCS=1, medians of five alternated
		// rounds). The summary names each problem, and replays the
		// first scenario of one never printed in full (testSummary).
		//
		// The two keys are looked up from one buffer on the stack, not
		// made strings (kindKey, failingKey): a map indexed by a
		// string(bytes) conversion makes none. Two allocations a finding
		// checked here, where the errors of the scenarios that need no
		// subtest all are: the ten-write suite under TestAgent 3,865 to
		// 3,707 allocations and 877.7 to 871.5 KB.
		var room [160]byte
		for i := range res.Findings {
			f := &res.Findings[i]
			if !fail || f.Severity != runtime.SeverityError {
				continue
			}
			failing := appendKindKey(append(room[:0], failingPrefix...), f)
			if kind := failing[len(failingPrefix):]; printed[string(kind)] == "" || printed[string(failing)] == "" {
				r.failed = true
				break
			}
		}
		// A report prints only in its subtest: a scenario that gets
		// none printed nothing a later one may point back to.
		if r.failed {
			for i := range res.Findings {
				f := &res.Findings[i]
				key, kind := f.GroupKey(), kindKey(f)
				if printed[key] == "" {
					printed[key] = f.Scenario
				}
				if printed[kind] == "" {
					printed[kind] = f.Scenario
				}
				if fail && f.Severity == runtime.SeverityError && printed[failingKey(kind)] == "" {
					printed[failingKey(kind)] = f.Scenario
				}
			}
		}
		return
	}
	// The findings of one scenario share its replay line, printed once
	// after them: one per finding doubled the lines of a suite whose
	// scenarios show several problems (a crash that repeats ten writes
	// prints ten, nine of them pointing back), and a subtest's output is
	// costly to print (testing indents and copies it to its parent, line
	// by line): the ten-write suite under TestAgent printed 159 lines,
	// now 97.
	replay := ""
	if len(res.Findings) > 0 {
		replay = res.Findings[0].Replay
		for i := range res.Findings {
			if res.Findings[i].Replay != replay {
				replay = ""
				break
			}
		}
	}
	out, _ := t.(testOutput)
	var all strings.Builder
	failed := false
	for i, f := range res.Findings {
		key := f.GroupKey()
		var line string
		if first, ok := printed[key]; ok && first != f.Scenario {
			line = "[" + f.Code + "] " + about(f) + ", as in " + first + " (printed there)"
		} else {
			printed[key] = f.Scenario
			line = "[" + f.Code + "] " + f.Message
			if f.Stack != "" {
				line += "\n" + indent(f.Stack, "    ")
			}
		}
		if replay == "" {
			line += "\n    replay: " + f.Replay
		}
		if res.Legend != "" && !strings.Contains(f.Message, res.Legend) {
			line += "\n    schedule " + res.Schedule + ": " + res.Legend + " (s = start, f = finish)"
		}
		if replay != "" && i == len(res.Findings)-1 {
			line += "\n    replay: " + replay
		}
		isErr := fail && f.Severity == runtime.SeverityError
		if !isErr {
			line = string(f.Severity) + ": " + line
		}
		if out != nil {
			// One write for the scenario's lines: testing takes its lock
			// and indents each write.
			failed = failed || isErr
			all.WriteString(line)
			all.WriteByte('\n')
			continue
		}
		if isErr {
			errorLine(t, line)
		} else {
			logLine(t, line)
		}
	}
	if out != nil && all.Len() > 0 {
		if failed {
			out.Fail()
		}
		io.WriteString(out.Output(), all.String())
	}
}

// failingKey is the key under which printed keeps the scenario whose
// subtest fails with the problem of key.
func failingKey(key string) string { return failingPrefix + key }

const failingPrefix = "\x00failing\x00"

// kindKey is the key under which printed keeps the scenario whose subtest
// printed the first problem of f's kind: f's GroupKey without its
// identities. Problems of one kind differ only in what they are about
// (post executed twice for "entry-0", for "entry-1"), and have one fix.
func kindKey(f *runtime.Finding) string {
	var room [128]byte
	return string(appendKindKey(room[:0], f))
}

// appendKindKey appends kindKey(f) to b.
func appendKindKey(b []byte, f *runtime.Finding) []byte {
	g := *f
	g.Identities = nil
	return append(append(b, "\x00kind\x00"...), g.GroupKey()...)
}

// testOutput is what a *testing.T has to print a line as Log does, without
// the file and line of the call, which for a finding would be testkit's
// own (testing.T.Output), and to fail.
type testOutput interface {
	Output() io.Writer
	Fail()
}

// errorLine fails t with line, as t.Errorf("%s", line) does, but, on a
// *testing.T, without the source location Errorf adds: finding what that
// is costs a walk of the stack per line, and it names this file.
func errorLine(t TB, line string) {
	if o, ok := t.(testOutput); ok {
		o.Fail()
		writeLine(o.Output(), line)
		return
	}
	t.Helper()
	t.Errorf("%s", line)
}

// logLine logs line, as t.Logf("%s", line) does; see errorLine.
func logLine(t TB, line string) {
	if o, ok := t.(testOutput); ok {
		writeLine(o.Output(), line)
		return
	}
	t.Helper()
	t.Logf("%s", line)
}

// plainLines reports whether t prints testkit's lines through Output, with
// no file and line (a *testing.T, whose Errorf and Logf would name
// testkit's): a function that writes to t only through errorLine and
// logLine then has no line whose location t.Helper could move, and calls
// it only for other TBs. On a *testing.T, Helper is a walk of the stack
// (runtime.Callers) under the test's lock, each call: six of them in
// the ten-write suite under TestAgent, for the subtest of its failing
// scenario and the summary.
func plainLines(t TB) bool {
	_, ok := t.(testOutput)
	return ok
}

// logSummaryLine logs line, a summary ended by a line break
// (summaryLine), as logLine logs the summary without it. To a *testing.T
// its bytes are written as they are: logLine's line break appended and
// io.WriteString's conversion to a []byte each copied the ten-write
// suite's summary of 7 KB into memory of its own: the suite under
// TestAgent allocates 855 KB where it took 871 (a count of
// runtime.MemStats over 50 suites; its time, 10 alternated rounds of 200
// suites, could not be told from before). An io.Writer neither changes
// nor keeps the bytes it is given.
func logSummaryLine(t TB, line string) {
	if o, ok := t.(testOutput); ok {
		o.Output().Write(unsafe.Slice(unsafe.StringData(line), len(line)))
		return
	}
	t.Helper()
	t.Logf("%s", strings.TrimSuffix(line, "\n"))
}

func writeLine(w io.Writer, line string) {
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	io.WriteString(w, line)
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
// subtests, once each, and are not printed again. folded says the
// scenarios that show only problems printed under an earlier one had no
// subtest (reportResult): a problem seen in more than one scenario gets a
// line that replays the second, as the others replay. printed is the
// suite's record of what its subtests printed (reportResult), nil when
// every scenario had a subtest: a problem whose kind only was printed,
// for another identity, gets a line that says where, and replays its
// first scenario, which had no subtest.
//
// The lines of the problems are appended to one builder grown once to
// their size, with no fmt and no joined lists: with fmt.Fprintf, a list
// joined per problem and the builder grown as it went, they took a fifth
// of the ten-write suite's summary.
func testSummary(rep *runtime.Report, folded bool, printed map[string]string) string {
	return summaryText(rep, folded, printed, false)
}

// summaryLine is testSummary ended by a line break, as logLine writes
// it to a *testing.T (logSummaryLine).
func summaryLine(rep *runtime.Report, folded bool, printed map[string]string) string {
	return summaryText(rep, folded, printed, true)
}

// summaryText is testSummary, with a line break after it when nl says.
func summaryText(rep *runtime.Report, folded bool, printed map[string]string, nl bool) string {
	brief := *rep
	brief.Findings, brief.Problems = nil, nil
	text := strings.TrimRight(render.Text(&brief, render.FoldPlainOK()), "\n")
	if len(rep.Problems) == 0 {
		if nl {
			return text + "\n"
		}
		return text
	}
	const (
		head   = "\nproblems (each printed in full under the first scenario that shows it):"
		headAs = "\nproblems (each printed in full under the first scenario that shows it, unless its line says where):"
		again  = " (each scenario named here replays alike): "
	)
	// where[i] says where problem i was printed, when that was not
	// under its first scenario: under a later one, which failed with
	// another problem, or only for another identity (reportResult).
	// Its first scenario, which had no subtest, is then the one to
	// replay.
	var where []string
	if folded && printed != nil {
		for i := range rep.Problems {
			p := &rep.Problems[i]
			if len(p.SeenIn) == 0 || p.SeenIn[0].Replay == "" {
				continue
			}
			w := ""
			switch in := printed[p.GroupKey()]; {
			case in == p.SeenIn[0].Scenario:
			case in != "":
				w = "printed in full under " + in
			default:
				if in := printed[kindKey(p)]; in != "" {
					w = "printed in full for another identity under " + in
				}
			}
			if w == "" {
				continue
			}
			if where == nil {
				where = make([]string, len(rep.Problems))
			}
			where[i] = w
		}
	}
	size := len(text) + len(headAs)
	for i := range rep.Problems {
		p := &rep.Problems[i]
		size += 16 + len(p.Severity) + len(p.Code) + len(p.Message)
		for _, s := range p.Ops {
			size += 2 + len(s)
		}
		for _, s := range p.Identities {
			size += 16 + len(s)
		}
		for _, in := range p.SeenIn {
			size += 2 + len(in.Scenario)
		}
		if folded && len(p.SeenIn) > 0 {
			size += 24 + len(again) + len(p.SeenIn[0].Scenario) + len(p.SeenIn[0].Replay)
			if where != nil {
				size += len(where[i])
			}
		}
		if folded && len(p.SeenIn) > 1 {
			size += len(p.SeenIn[1].Scenario) + len(p.SeenIn[1].Replay)
		}
	}
	var b strings.Builder
	b.Grow(size + 1)
	b.WriteString(text)
	if where != nil {
		b.WriteString(headAs)
	} else {
		b.WriteString(head)
	}
	for i := range rep.Problems {
		p := &rep.Problems[i]
		// "\n  %-7s %s %s: %s": the severity padded to seven runes.
		b.WriteString("\n  ")
		b.WriteString(string(p.Severity))
		for n := utf8.RuneCountInString(string(p.Severity)); n < 7; n++ {
			b.WriteByte(' ')
		}
		b.WriteByte(' ')
		b.WriteString(p.Code)
		b.WriteByte(' ')
		writeAbout(&b, p)
		b.WriteString(": ")
		for j, in := range p.SeenIn {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(in.Scenario)
		}
		switch {
		case where != nil && where[i] != "":
			b.WriteString("\n          ")
			b.WriteString(where[i])
			b.WriteString("; replay ")
			b.WriteString(p.SeenIn[0].Scenario)
			b.WriteString(again)
			b.WriteString(p.SeenIn[0].Replay)
		case folded && len(p.SeenIn) > 1 && p.SeenIn[1].Replay != "":
			b.WriteString("\n          replay ")
			b.WriteString(p.SeenIn[1].Scenario)
			b.WriteString(again)
			b.WriteString(p.SeenIn[1].Replay)
		}
	}
	if nl {
		b.WriteByte('\n')
	}
	return b.String()
}

// writeAbout writes about(*f) to b.
func writeAbout(b *strings.Builder, f *runtime.Finding) {
	start := b.Len()
	for i, s := range f.Ops {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
	}
	if len(f.Identities) > 0 {
		b.WriteString(" for identity ")
		for i, s := range f.Identities {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(s)
		}
	}
	if b.Len() == start {
		b.WriteString(firstLine(f.Message))
	}
}
