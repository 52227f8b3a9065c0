package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentidem/agentidem-go/runtime"
)

// Option configures Text.
type Option interface{ apply(*textConfig) }

type textConfig struct{ color, fold bool }

type optionFunc func(*textConfig)

func (f optionFunc) apply(c *textConfig) { f(c) }

// Color marks the verdict and scenario statuses with ANSI colors. Use it
// only when the output is a terminal and NO_COLOR is unset: see Decide.
func Color() Option { return optionFunc(func(c *textConfig) { c.color = true }) }

// FoldPlainOK lists the scenarios that passed with nothing to note (no
// note, schedule, absorbed repeat, and the fault, if any, fired) in one
// line that counts them by kind, after the others: the summary go test
// prints for a failing test, where the lines to read are the others.
func FoldPlainOK() Option { return optionFunc(func(c *textConfig) { c.fold = true }) }

const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[1;31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiDim    = "\x1b[2m"
)

// Text renders a report as the readable summary that go test -v and
// agentidem-gen report print: the verdict line, one line per scenario (its
// status, its fault and whether it fired, its calls and findings), then every
// finding with its op, identity, calls, scenario and replay line. It ends
// without a newline.
func Text(r *runtime.Report, opts ...Option) string {
	var cfg textConfig
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	paint := func(code, s string) string {
		if !cfg.color || code == "" {
			return s
		}
		return code + s + ansiReset
	}
	var b strings.Builder
	b.Grow(1024 + 96*len(r.Results)) // grown line by line, it was copied a dozen times
	verdict := Verdict(r)
	vcolor := ansiGreen
	switch verdict {
	case VerdictUnsafe, VerdictBaselineFailed:
		vcolor = ansiRed
	case VerdictInconclusive:
		vcolor = ansiYellow
	}
	fmt.Fprintf(&b, "agentidem %s: %s — baseline %s, %s, %d unsafe, %d inconclusive, %d agent runs, %s\n",
		clean(r.Name), paint(vcolor, verdict), baselineWord(r), scenarioCounts(r),
		r.UnsafeCount, r.InconclusiveCount, r.AgentRuns, formatDuration(r.Duration))
	if r.BaselineFailure != "" {
		fmt.Fprintf(&b, "  baseline failure: %s\n", oneLine(r.BaselineFailure))
	}
	if r.Shard != nil {
		fmt.Fprintf(&b, "  %s\n", clean(r.Shard.String()))
	}

	all := scenarios(r)
	var folded []*runtime.Result
	if cfg.fold {
		shown := all[:0:0]
		for i, res := range all {
			if i == 0 && res == r.Baseline || !plainOK(res) {
				shown = append(shown, res)
			} else {
				folded = append(folded, res)
			}
		}
		all = shown
	}
	if len(all)+len(folded) > 0 {
		b.WriteString("scenarios:\n")
		width := 0
		for _, res := range all {
			width = max(width, len(res.Scenario))
		}
		for i, res := range all {
			status := scenarioStatus(res, i == 0 && res == r.Baseline)
			word, color := statusWord(status)
			fmt.Fprintf(&b, "  %s %-*s  %s\n", paint(color, fmt.Sprintf("%-12s", word)), width, clean(res.Scenario), scenarioFacts(res))
			if res.Trace != nil {
				for _, n := range res.Trace.Notes {
					fmt.Fprintf(&b, "               note: %s\n", oneLine(n))
				}
			}
		}
		if len(folded) > 0 {
			word, color := statusWord(statusSafe)
			fmt.Fprintf(&b, "  %s %s\n", paint(color, fmt.Sprintf("%-12s", word)), foldedLine(folded, len(all) > 0))
		}
	}

	// One finding per problem, with every scenario that shows it.
	problems := r.Problems
	if len(problems) == 0 && len(r.Findings) > 0 {
		problems = runtime.GroupFindings(r.Findings) // a report from before problems
	}
	if len(problems) > 0 {
		b.WriteString("findings:\n")
	}
	legends := scheduleLegends(r)
	for _, f := range problems {
		sev := string(f.Severity)
		color := ansiDim
		switch f.Severity {
		case runtime.SeverityError:
			color = ansiRed
		case runtime.SeverityWarning:
			color = ansiYellow
		}
		fmt.Fprintf(&b, "  %s %-22s %s\n", paint(color, fmt.Sprintf("%-7s", sev)), clean(f.Code), clean(f.Scenario))
		fmt.Fprintf(&b, "          %s\n", oneLine(f.Message))
		var facts []string
		if len(f.Ops) > 0 {
			facts = append(facts, "op: "+strings.Join(f.Ops, ", "))
		}
		if len(f.Identities) > 0 {
			facts = append(facts, "identity: "+strings.Join(f.Identities, ", "))
		}
		if len(f.Calls) > 0 {
			facts = append(facts, "calls: "+strings.Join(f.Calls, ", "))
		}
		if len(facts) > 0 {
			fmt.Fprintf(&b, "          %s\n", clean(strings.Join(facts, "  ")))
		}
		if len(f.SeenIn) > 1 {
			fmt.Fprintf(&b, "          seen in %d scenarios:\n", len(f.SeenIn))
			for _, in := range f.SeenIn {
				fmt.Fprintf(&b, "            %s\n", clean(in.Scenario))
				if l := legends[in.Scenario]; l != "" {
					fmt.Fprintf(&b, "              %s\n", clean(l))
				}
				fmt.Fprintf(&b, "              replay: %s\n", clean(in.Replay))
			}
		} else {
			if l := legends[f.Scenario]; l != "" && !strings.Contains(f.Message, l) {
				fmt.Fprintf(&b, "          %s\n", clean(l))
			}
			if f.Replay != "" {
				fmt.Fprintf(&b, "          replay: %s\n", clean(f.Replay))
			}
		}
	}
	return escapeBidi(strings.TrimRight(b.String(), "\n"))
}

// plainOK reports whether a scenario passed with nothing to note: no
// finding, not inconclusive, its fault (if any) fired, no note, schedule
// legend or absorbed repeat.
func plainOK(res *runtime.Result) bool {
	if len(res.Findings) > 0 || res.Inconclusive || res.Legend != "" || res.Fault != nil && !res.FaultFired {
		return false
	}
	if res.Trace != nil {
		if len(res.Trace.Notes) > 0 {
			return false
		}
		for i := range res.Trace.Ops {
			if res.Trace.Ops[i].Repeat == runtime.RepeatAbsorbed {
				return false
			}
		}
	}
	return true
}

// foldedLine counts folded scenarios by their first path element, in the
// order they ran, and those where the agent returned an error (under a
// fault, most agents give up): "30 more with nothing to note:
// lost_request (10), ...; the agent returned an error in 20".
func foldedLine(folded []*runtime.Result, more bool) string {
	counts := map[string]int{}
	var order []string
	failed := 0
	for _, res := range folded {
		kind, _, _ := strings.Cut(res.Scenario, "/")
		if counts[kind] == 0 {
			order = append(order, kind)
		}
		counts[kind]++
		if res.Failed {
			failed++
		}
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s (%d)", clean(k), counts[k])
	}
	what := plural(len(folded), "scenario")
	if more {
		what = fmt.Sprintf("%d more", len(folded))
	}
	line := fmt.Sprintf("%s with nothing to note: %s", what, strings.Join(parts, ", "))
	switch {
	case failed == len(folded) && failed > 1:
		line += "; the agent returned an error in each"
	case failed > 0:
		line += fmt.Sprintf("; the agent returned an error in %d", failed)
	}
	return line
}

// scenarioFacts is the tail of a scenario line: fault, calls, findings,
// joined by ", ". It is written into one builder, not listed and joined:
// the summary writes a line per scenario, and its pieces were most of the
// summary's allocations (BenchmarkSummary).
func scenarioFacts(res *runtime.Result) string {
	var b strings.Builder
	b.Grow(96)
	next := func() {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
	}
	if res.Legend != "" {
		b.WriteString(res.Legend)
	}
	if fl := faultLabel(res); fl != "" {
		next()
		b.WriteString("fault ")
		b.WriteString(fl)
		if res.FaultFired {
			b.WriteString(" (fired)")
		} else {
			b.WriteString(" (did not fire")
			if res.Trace != nil && res.Trace.FaultNote != "" {
				b.WriteString(": ")
				b.WriteString(res.Trace.FaultNote)
			}
			b.WriteString(")")
		}
	}
	calls := 0
	if res.Trace != nil {
		calls = len(res.Trace.Ops)
	}
	next()
	writePlural(&b, calls, "call")
	if res.Clock == runtime.ClockVirtual {
		b.WriteString(", on virtual time")
	}
	if res.Trace != nil {
		// Repeats that had no further effect, and what said so.
		var (
			by    map[string]int
			order []string
		)
		for i := range res.Trace.Ops {
			// By index: an Operation is hundreds of bytes, and a copy
			// of each was most of the summary's cost.
			if o := &res.Trace.Ops[i]; o.Repeat == runtime.RepeatAbsorbed {
				if by == nil {
					by = map[string]int{}
				}
				if by[o.JudgedBy] == 0 {
					order = append(order, o.JudgedBy)
				}
				by[o.JudgedBy]++
			}
		}
		for _, j := range order {
			b.WriteString(", ")
			writePlural(&b, by[j], "repeat")
			b.WriteString(" absorbed (")
			b.WriteString(judgedWords(j))
			b.WriteString(")")
		}
	}
	if res.Failed {
		b.WriteString(", agent returned an error")
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
		b.WriteString(", ")
		writePlural(&b, errs, "error finding")
	}
	if others > 0 {
		b.WriteString(", ")
		writePlural(&b, others, "other finding")
	}
	return clean(b.String())
}

func statusWord(status string) (word, color string) {
	switch status {
	case statusUnsafe:
		return "UNSAFE", ansiRed
	case statusFailed:
		return "FAILED", ansiRed
	case statusInconclusive:
		return "inconclusive", ansiYellow
	}
	return "ok", ansiGreen
}

// writePlural writes plural(n, noun) to b.
func writePlural(b *strings.Builder, n int, noun string) {
	var d [20]byte
	b.Write(strconv.AppendInt(d[:0], int64(n), 10))
	b.WriteByte(' ')
	b.WriteString(noun)
	if n != 1 {
		b.WriteByte('s')
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// oneLine keeps a message on its line: newlines become " | " and other
// control characters are escaped.
func oneLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return clean(strings.ReplaceAll(s, "\n", " | "))
}

// clean escapes control characters (ANSI escapes, carriage returns) in text
// that came from a trace, so it cannot rewrite the reader's terminal.
func clean(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0)
}

// judgedWords says what decided that a repeat had no further effect.
func judgedWords(j string) string {
	switch j {
	case runtime.JudgedByDeclaration:
		return "declared idempotent"
	case runtime.JudgedByState:
		return "state unchanged"
	case runtime.JudgedByEndState:
		return "end state as one delivery left it"
	}
	return j
}
