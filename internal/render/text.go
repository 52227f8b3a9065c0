package render

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
//
// Every line is appended to one builder, padded as %-*s pads (to a width in
// runes), without fmt: testkit prints this summary for every failing
// TestAgent, and fmt's boxed arguments and intermediate strings were most of
// its cost (BenchmarkTextTenWrite). testdata/text holds what it printed
// with fmt, and TestTextGolden holds it to that.
func Text(r *runtime.Report, opts ...Option) string {
	var cfg textConfig
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	all := scenarios(r)
	var folded []*runtime.Result
	if cfg.fold {
		// Shown from the front of one buffer, folded from its back, then
		// turned back into the order they ran.
		part := make([]*runtime.Result, len(all))
		shown, back := 0, len(part)
		for i, res := range all {
			if i == 0 && res == r.Baseline || !plainOK(res) {
				part[shown] = res
				shown++
			} else {
				back--
				part[back] = res
			}
		}
		all, folded = part[:shown:shown], part[back:]
		slices.Reverse(folded)
	}
	problems := r.Problems
	if len(problems) == 0 && len(r.Findings) > 0 {
		problems = runtime.GroupFindings(r.Findings) // a report from before problems
	}

	// scratch holds a scenario line's facts, grown rarely past this.
	w := textWriter{color: cfg.color, scratch: make([]byte, 0, 256)}
	// About what each line takes, so that the builder is not copied as
	// it grows.
	size := 512 + 112*len(all)
	if len(folded) > 0 {
		size += 160
	}
	for i := range problems {
		size += 256 + 160*len(problems[i].SeenIn)
	}
	w.b.Grow(size)
	b := &w.b

	verdict := Verdict(r)
	vcolor := ansiGreen
	switch verdict {
	case VerdictUnsafe, VerdictBaselineFailed:
		vcolor = ansiRed
	case VerdictInconclusive:
		vcolor = ansiYellow
	}
	b.WriteString("agentidem ")
	w.clean(r.Name)
	b.WriteString(": ")
	w.paint(vcolor, verdict, 0)
	b.WriteString(" — baseline ")
	b.WriteString(baselineWord(r))
	b.WriteString(", ")
	w.scratch = appendScenarioCounts(w.scratch[:0], r)
	b.Write(w.scratch)
	b.WriteString(", ")
	// UnsafeCount and InconclusiveCount count the scenarios after the
	// baseline, the ones just listed: "U of N unsafe" says so, where a bare
	// "0 unsafe" after "baseline unsafe" read as a contradiction. With no
	// other scenario there is nothing to count.
	if len(r.Results) > 0 || r.UnsafeCount > 0 || r.InconclusiveCount > 0 {
		w.int(r.UnsafeCount)
		if len(r.Results) > 0 {
			b.WriteString(" of ")
			w.int(len(r.Results))
		}
		b.WriteString(" unsafe, ")
		w.int(r.InconclusiveCount)
		b.WriteString(" inconclusive, ")
	}
	w.scratch = appendPlural(w.scratch[:0], r.AgentRuns, "agent run") // "1 agent run", not "1 agent runs"
	b.Write(w.scratch)
	b.WriteString(", ")
	b.WriteString(formatDuration(r.Duration))
	b.WriteByte('\n')
	if r.BaselineFailure != "" {
		b.WriteString("  baseline failure: ")
		w.oneLine(r.BaselineFailure)
		b.WriteByte('\n')
	}
	if r.Shard != nil {
		b.WriteString("  ")
		w.clean(r.Shard.String())
		b.WriteByte('\n')
	}
	for _, n := range r.Notes {
		b.WriteString("  note: ")
		w.oneLine(n)
		b.WriteByte('\n')
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
			b.WriteString("  ")
			w.paint(color, word, 12)
			b.WriteByte(' ')
			w.pad(w.clean(res.Scenario), width)
			b.WriteString("  ")
			w.scratch = appendScenarioFacts(w.scratch[:0], res)
			w.cleanBytes(w.scratch)
			b.WriteByte('\n')
			if res.Trace != nil {
				for _, n := range res.Trace.Notes {
					b.WriteString("               note: ")
					w.oneLine(n)
					b.WriteByte('\n')
				}
			}
		}
		if len(folded) > 0 {
			word, color := statusWord(statusSafe)
			b.WriteString("  ")
			w.paint(color, word, 12)
			b.WriteByte(' ')
			w.foldedLine(folded, len(all) > 0)
			b.WriteByte('\n')
		}
	}

	// One finding per problem, with every scenario that shows it.
	if len(problems) > 0 {
		b.WriteString("findings:\n")
	}
	var legends map[string]*runtime.Result // built for the first finding that may need it
	for i := range problems {
		f := &problems[i]
		if legends == nil {
			legends = scheduleResults(r)
		}
		color := ansiDim
		switch f.Severity {
		case runtime.SeverityError:
			color = ansiRed
		case runtime.SeverityWarning:
			color = ansiYellow
		}
		b.WriteString("  ")
		w.paint(color, string(f.Severity), 7)
		b.WriteByte(' ')
		w.pad(w.clean(f.Code), 22)
		b.WriteByte(' ')
		w.clean(f.Scenario)
		b.WriteString("\n          ")
		w.oneLine(f.Message)
		b.WriteByte('\n')
		if len(f.Ops)+len(f.Identities)+len(f.Calls) > 0 {
			// Joined, then escaped as one string, as clean(strings.Join(facts, "  ")) did.
			p := w.scratch[:0]
			p = appendFact(p, "op: ", f.Ops)
			p = appendFact(p, "identity: ", f.Identities)
			p = appendFact(p, "calls: ", f.Calls)
			w.scratch = p
			b.WriteString("          ")
			w.cleanBytes(p)
			b.WriteByte('\n')
		}
		if len(f.SeenIn) > 1 {
			b.WriteString("          seen in ")
			w.int(len(f.SeenIn))
			b.WriteString(" scenarios:\n")
			for _, in := range f.SeenIn {
				b.WriteString("            ")
				w.clean(in.Scenario)
				b.WriteByte('\n')
				if res := legends[in.Scenario]; res != nil {
					b.WriteString("              ")
					w.scratch = appendLegendLine(w.scratch[:0], res)
					w.cleanBytes(w.scratch)
					b.WriteByte('\n')
				}
				b.WriteString("              replay: ")
				w.clean(in.Replay)
				b.WriteByte('\n')
			}
		} else {
			if res := legends[f.Scenario]; res != nil {
				if l := legendLine(res); !strings.Contains(f.Message, l) {
					b.WriteString("          ")
					w.clean(l)
					b.WriteByte('\n')
				}
			}
			if f.Replay != "" {
				b.WriteString("          replay: ")
				w.clean(f.Replay)
				b.WriteByte('\n')
			}
		}
	}
	return escapeBidi(strings.TrimRight(b.String(), "\n"))
}

// textWriter is the builder Text appends to, with a scratch buffer for
// the pieces that are escaped as a whole (clean decides by the whole
// string: one control character in it makes it rewrite invalid UTF-8 too).
type textWriter struct {
	b       strings.Builder
	scratch []byte
	color   bool
}

// paint writes s padded to width runes (as %-*s), in color code when
// colors are on: the padding inside the color, as it was.
func (w *textWriter) paint(code, s string, width int) {
	on := w.color && code != ""
	if on {
		w.b.WriteString(code)
	}
	w.b.WriteString(s)
	w.pad(utf8.RuneCountInString(s), width)
	if on {
		w.b.WriteString(ansiReset)
	}
}

// pad writes the spaces that pad a string of n runes to width.
func (w *textWriter) pad(n, width int) {
	const spaces = "                                "
	for n < width {
		k := min(width-n, len(spaces))
		w.b.WriteString(spaces[:k])
		n += k
	}
}

func (w *textWriter) int(n int) {
	var d [20]byte
	w.b.Write(strconv.AppendInt(d[:0], int64(n), 10))
}

// clean writes clean(s) and returns how many runes it wrote.
func (w *textWriter) clean(s string) int {
	if !hasControl(s) {
		w.b.WriteString(s)
		return utf8.RuneCountInString(s)
	}
	n := 0
	for _, r := range s {
		n += writeEscaped(&w.b, r, isControl)
	}
	return n
}

// cleanBytes writes clean(string(p)).
func (w *textWriter) cleanBytes(p []byte) {
	if !hasControl(p) {
		w.b.Write(p)
		return
	}
	for _, r := range string(p) { // no copy: the compiler ranges over p
		writeEscaped(&w.b, r, isControl)
	}
}

// oneLine writes a message on its line: trailing newlines dropped, the
// others written " | ", and the result escaped (clean) as one string.
func (w *textWriter) oneLine(s string) {
	s = strings.TrimRight(s, "\n")
	if strings.IndexByte(s, '\n') < 0 {
		w.clean(s)
		return
	}
	p := w.scratch[:0]
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		p = append(p, s[:i]...)
		p = append(p, " | "...)
		s = s[i+1:]
	}
	p = append(p, s...)
	w.scratch = p
	w.cleanBytes(p)
}

// writeEscaped writes r, or \uXXXX (as %04x) when escape(r), and returns
// the runes written.
func writeEscaped(b *strings.Builder, r rune, escape func(rune) bool) int {
	if !escape(r) {
		b.WriteRune(r)
		return 1
	}
	const hex = "0123456789abcdef"
	// Every rune escaped here (controls, bidi marks) is below U+10000:
	// four digits, as %04x writes it.
	b.WriteString("\\u")
	b.WriteByte(hex[r>>12&0xf])
	b.WriteByte(hex[r>>8&0xf])
	b.WriteByte(hex[r>>4&0xf])
	b.WriteByte(hex[r&0xf])
	return 6
}

// appendFact appends label and the items joined by ", ", after the facts
// already in p and "  ". Nothing for no items.
func appendFact(p []byte, label string, items []string) []byte {
	if len(items) == 0 {
		return p
	}
	if len(p) > 0 {
		p = append(p, "  "...)
	}
	p = append(p, label...)
	for i, it := range items {
		if i > 0 {
			p = append(p, ", "...)
		}
		p = append(p, it...)
	}
	return p
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

// foldedLine writes the count of folded scenarios by their first path
// element, in the order they ran, and those where the agent returned an
// error (under a fault, most agents give up): "30 more with nothing to
// note: lost_request (10), ...; the agent returned an error in 20".
func (w *textWriter) foldedLine(folded []*runtime.Result, more bool) {
	// Kinds are scenario families, a handful: counted in a slice, and in
	// a map only past a dozen, where a linear search would start to cost.
	type kindCount struct {
		kind string
		n    int
	}
	var (
		small [8]kindCount
		order = small[:0]
		index map[string]int
	)
	failed := 0
	for _, res := range folded {
		kind, _, _ := strings.Cut(res.Scenario, "/")
		at := -1
		if index != nil {
			if i, ok := index[kind]; ok {
				at = i
			}
		} else {
			for i := range order {
				if order[i].kind == kind {
					at = i
					break
				}
			}
		}
		if at < 0 {
			at = len(order)
			order = append(order, kindCount{kind: kind})
			if index != nil {
				index[kind] = at
			} else if len(order) > 12 {
				index = make(map[string]int, 2*len(order))
				for i, kc := range order {
					index[kc.kind] = i
				}
			}
		}
		order[at].n++
		if res.Failed {
			failed++
		}
	}
	b := &w.b
	if more {
		w.int(len(folded))
		b.WriteString(" more")
	} else {
		writePlural(b, len(folded), "scenario")
	}
	b.WriteString(" with nothing to note: ")
	for i, kc := range order {
		if i > 0 {
			b.WriteString(", ")
		}
		w.clean(kc.kind)
		b.WriteString(" (")
		w.int(kc.n)
		b.WriteByte(')')
	}
	switch {
	case failed == len(folded) && failed > 1:
		b.WriteString("; the agent returned an error in each")
	case failed > 0:
		b.WriteString("; the agent returned an error in ")
		w.int(failed)
	}
}

// scenarioFacts is the tail of a scenario line: fault, calls, findings,
// joined by ", " and escaped (clean).
func scenarioFacts(res *runtime.Result) string {
	return clean(string(appendScenarioFacts(nil, res)))
}

// appendScenarioFacts appends the tail of a scenario line, not yet
// escaped: it is written piece by piece, not listed and joined, since the
// summary writes a line per scenario and its pieces were most of the
// summary's allocations (BenchmarkSummary).
func appendScenarioFacts(p []byte, res *runtime.Result) []byte {
	start := len(p)
	next := func() {
		if len(p) > start {
			p = append(p, ", "...)
		}
	}
	p = append(p, res.Legend...)
	if res.Fault != nil && res.Fault.Kind != runtime.FaultNone { // faultLabel(res) != ""
		next()
		// faultLabel, that is Fault.String, without its string.
		p = append(p, "fault "...)
		p = append(p, res.Fault.Op...)
		p = append(p, '#')
		p = strconv.AppendInt(p, int64(res.Fault.Occurrence), 10)
		p = append(p, ' ')
		p = append(p, res.Fault.Kind...)
		if res.FaultFired {
			p = append(p, " (fired)"...)
		} else {
			p = append(p, " (did not fire"...)
			if res.Trace != nil && res.Trace.FaultNote != "" {
				p = append(p, ": "...)
				p = append(p, res.Trace.FaultNote...)
			}
			p = append(p, ')')
		}
	}
	calls := 0
	if res.Trace != nil {
		calls = len(res.Trace.Ops)
	}
	next()
	p = appendPlural(p, calls, "call")
	if res.Clock == runtime.ClockVirtual {
		p = append(p, ", on virtual time"...)
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
			p = append(p, ", "...)
			p = appendPlural(p, by[j], "repeat")
			p = append(p, " absorbed ("...)
			p = append(p, judgedWords(j)...)
			p = append(p, ')')
		}
	}
	if res.Failed {
		p = append(p, failedWords(res)...)
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
		p = append(p, ", "...)
		p = appendPlural(p, errs, "error finding")
	}
	if others > 0 {
		p = append(p, ", "...)
		p = appendPlural(p, others, "other finding")
	}
	return p
}

// failedWords says how the agent of a failed scenario ended: it returned
// an error, or it stalled and was cancelled, or it stalled and never
// returned (runtime.Result.Returned).
func failedWords(res *runtime.Result) string {
	switch res.Returned() {
	case "left running":
		return ", stalled, agent did not return"
	case "cancelled":
		return ", stalled, agent returned once cancelled"
	}
	return ", agent returned an error"
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

// appendPlural appends plural(n, noun) to p.
func appendPlural(p []byte, n int, noun string) []byte {
	p = strconv.AppendInt(p, int64(n), 10)
	p = append(p, ' ')
	p = append(p, noun...)
	if n != 1 {
		p = append(p, 's')
	}
	return p
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// clean escapes control characters (ANSI escapes, carriage returns) in text
// that came from a trace, so it cannot rewrite the reader's terminal.
func clean(s string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		writeEscaped(&b, r, isControl)
	}
	return b.String()
}

// hasControl is strings.ContainsFunc(s, isControl), by bytes: a C0
// control but the tab, DEL, or C2 80..C2 9F, the UTF-8 of U+0080..U+009F.
// C2 is a lead byte, so it starts a rune wherever ContainsFunc decodes
// one, and the two agree on any input, invalid UTF-8 included; this one
// makes no call per byte.
func hasControl[S ~string | ~[]byte](s S) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' || c == 0x7f || c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] < 0xa0 {
			return true
		}
	}
	return false
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0)
}

// judgedWords says in words what decided a repeat (runtime's JudgedBy*
// values); every value has its words (TestJudgedWordsCoverEveryJudgedBy),
// so a summary never shows a raw enum.
func judgedWords(j string) string {
	switch j {
	case runtime.JudgedByDeclaration:
		return "declared idempotent"
	case runtime.JudgedByState:
		return "state unchanged"
	case runtime.JudgedByEndState:
		return "end state as one delivery left it"
	case runtime.JudgedByOneExecution:
		return "overlapping calls left what one execution left"
	case runtime.JudgedByCount:
		return "counted: nothing else to judge by"
	}
	return j
}
