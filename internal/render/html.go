package render

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

//go:embed report.html.tmpl
var htmlSource string

//go:embed report.css
var cssSource string

//go:embed report.js
var jsSource string

// reportTemplate is parsed once; the CSS and script are constants of the
// package, so they go in as trusted template.CSS and template.JS, and the
// Content-Security-Policy allows exactly this script by its hash.
var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"style":  func() template.CSS { return template.CSS(cssSource) },
	"script": func() template.JS { return template.JS(jsSource) },
	// command: what a copy button copies (command.go).
	"command": shellCommand,
}).Parse(htmlSource))

// csp forbids every network request (no connect, no images, no fonts, no
// frames) and every script but the page's own, so that even a rendering bug
// could not make the report fetch or run anything.
var csp = func() string {
	sum := sha256.Sum256([]byte(jsSource))
	return "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'"
}()

// HTML writes the report as one self-contained HTML page: inline CSS and
// script, no external asset, no network access. A header gives the verdict
// (SAFE, UNSAFE, BASELINE FAILED, INCONCLUSIVE) and every error finding with a
// link to its scenario; then, per scenario, a timeline with one row per call,
// grouped by invocation (delivery of the agent), over time or, when durations
// are ~0, over the logical order of call starts and completions. Calls of a
// parallel batch are shaded together; injected faults, lost
// acknowledgements, failures, replays and the calls a finding names are
// marked. Hovering a call shows a summary; clicking it opens its arguments
// (as recorded, so redacted), identity, entity, result and error. Every
// scenario carries its replay line.
func HTML(w io.Writer, r *runtime.Report) error {
	if r == nil {
		return fmt.Errorf("render: nil report")
	}
	var buf strings.Builder
	if err := reportTemplate.Execute(&buf, buildPage(r)); err != nil {
		return fmt.Errorf("rendering html report %s: %w", r.Name, err)
	}
	_, err := io.WriteString(w, escapeBidi(buf.String()))
	return err
}

type page struct {
	CSP          string
	Name         string
	Verdict      string
	VerdictClass string
	Headline     string
	Stats        []stat
	BaselineFail string
	Notes        []string       // the report's, under the verdict
	Errors       []errorGroup   // error findings by scenario, for the header
	Scenarios    []scenarioView // in the order they ran
	Timelines    []scenarioView // the same, problems first
	Started      string
	Seed         int64
}

// errorGroup is one problem: the error findings with one code on the same
// ops and identities, whichever scenarios they came from.
type errorGroup struct {
	Code      string
	Message   string // of the first occurrence
	Ops       string
	Identity  string
	Replay    string // of the first occurrence
	Legend    string // the first occurrence's schedule legend, if any
	Scenarios []scenarioLink
}

type scenarioLink struct {
	Name   string
	Anchor string
	Status string
}

type stat struct {
	Label string
	Value string
	Class string
}

type findingView struct {
	Code     string
	Severity string
	Message  string
	Scenario string
	Anchor   string
	Ops      string
	Identity string
	Calls    string
	Replay   string
	Stack    string
}

type scenarioView struct {
	Anchor      string
	Name        string
	Kind        string
	Status      string
	StatusLabel string
	Open        bool
	Fault       string
	FaultState  string
	Error       string
	ErrorLead   string // what the agent did: "the agent returned an error", ... (errorLead)
	Replay      string
	Legend      string // the schedule's calls: s0 = op#k, ...
	Axis        string
	Ticks       []tick
	Lanes       []laneView
	Calls       int
	CallsLabel  string
	Invariants  []runtime.InvariantResult
	Duplicates  []duplicateView
	Findings    []findingView
	Panics      []runtime.Panic
	RunErrors   []string
	Notes       []string // the trace's notes: why a scenario was not judged, did not run, ...
}

type tick struct {
	Left  string
	Label string
}

type duplicateView struct {
	Op       string
	Identity string
	Count    int
	Calls    string
}

type laneView struct {
	Invocation int
	Label      string
	Rows       []rowView
}

type rowView struct {
	ID string
	// Call names the call as findings, faults and schedule legends do:
	// op#k, with the delivery in front after the first ("2:op#k"). Sched
	// is its number in the scenario's schedule legend ("s1", "round 2:
	// s0"), "" outside one. Before, a row was numbered by its place in
	// start order ("#0"), beside a legend whose s0 was another call
	// (red team rtO, item 10).
	Call        string
	Sched       string
	Seq         int
	Name        string
	Kind        string
	Classes     string
	Left        string
	Width       string
	Batch       int
	BatchClass  string
	BandLeft    string
	BandWidth   string
	Marks       []string
	Codes       []string // error findings that name the call
	Warnings    []string // other findings that name it
	Title       string
	Args        string
	Identity    string
	IdentityErr string
	Entity      string
	Result      string
	Error       string
	Status      string
	Observation string
	Fault       string
	Panic       string
	Site        string
	When        string
}

func buildPage(r *runtime.Report) page {
	p := page{
		CSP:     csp,
		Name:    r.Name,
		Verdict: Verdict(r),
		Seed:    r.Seed,
	}
	if !r.StartedAt.IsZero() {
		p.Started = r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	switch p.Verdict {
	case VerdictSafe:
		p.VerdictClass = "safe"
	case VerdictInconclusive:
		p.VerdictClass = "inconclusive"
	default:
		p.VerdictClass = "unsafe"
	}
	p.BaselineFail = r.BaselineFailure
	p.Notes = r.Notes
	all := scenarios(r)
	for i, res := range all {
		p.Scenarios = append(p.Scenarios, buildScenario(i, res, i == 0 && res == r.Baseline))
	}
	p.Errors = groupErrors(p.Scenarios)
	// Timelines put what needs reading first: unsafe and failed scenarios,
	// then inconclusive ones, then the safe ones, each in the order they ran.
	for _, rank := range [][]string{{statusFailed, statusUnsafe}, {statusInconclusive}, {statusSafe}} {
		for _, s := range p.Scenarios {
			if slices.Contains(rank, s.Status) {
				p.Timelines = append(p.Timelines, s)
			}
		}
	}
	baseline := baselineWord(r)
	p.Headline = headline(r, p.Verdict, baseline)
	kinds := countKinds(r)
	p.Stats = []stat{
		{"baseline", baseline, map[string]string{"ok": "", "inconclusive": "warn", "unsafe": "bad", "failed": "bad"}[baseline]},
		{"fault scenarios", strconv.Itoa(kinds.faults), ""},
		{"faults fired", strconv.Itoa(kinds.fired), ""},
		{"unsafe", strconv.Itoa(r.UnsafeCount), map[bool]string{true: "bad", false: ""}[r.UnsafeCount > 0]},
		{"inconclusive", strconv.Itoa(r.InconclusiveCount), map[bool]string{true: "warn", false: ""}[r.InconclusiveCount > 0]},
		{"agent runs", strconv.Itoa(r.AgentRuns), ""},
		{"duration", formatDuration(r.Duration), ""},
	}
	if kinds.schedules > 0 { // after the fault tiles: a run of schedules only shows 0 faults, not a missing tile
		p.Stats = slices.Insert(p.Stats, 3, stat{"schedules", strconv.Itoa(kinds.schedules), ""})
	}
	return p
}

// headline says what the verdict rests on with the counts of the text
// summary's first line (Text) and of the tiles: the baseline apart, then
// the scenarios after it, of which the report's UnsafeCount and
// InconclusiveCount are. Before, it counted the baseline among the
// scenarios, and the page said "4 of 7 scenarios unsafe" where the console
// said "4 of 6 unsafe" for the same run, and "54 of 60" beside an unsafe
// tile of 53 (red team rtO, item 10).
func headline(r *runtime.Report, verdict, baseline string) string {
	n := len(r.Results)
	switch verdict {
	case VerdictBaselineFailed:
		return "the agent failed without any fault; no fault scenario ran"
	case VerdictUnsafe:
		switch {
		case baseline != "unsafe":
			return fmt.Sprintf("%d of %s after the baseline unsafe", r.UnsafeCount, plural(n, "scenario"))
		case n == 0:
			return "the baseline unsafe: the bug shows without any fault"
		case r.UnsafeCount == 0:
			return fmt.Sprintf("the baseline unsafe, none of the %s after it: the bug shows without any fault", plural(n, "scenario"))
		}
		return fmt.Sprintf("the baseline unsafe, and %d of the %s after it: the bug shows without any fault", r.UnsafeCount, plural(n, "scenario"))
	case VerdictInconclusive:
		switch {
		case baseline != "inconclusive":
			return fmt.Sprintf("no unsafe scenario, but %d of %s after the baseline inconclusive", r.InconclusiveCount, plural(n, "scenario"))
		case r.InconclusiveCount == 0:
			return "no unsafe scenario, but the baseline inconclusive"
		}
		return fmt.Sprintf("no unsafe scenario, but the baseline and %d of the %s after it inconclusive", r.InconclusiveCount, plural(n, "scenario"))
	}
	switch n {
	case 0:
		return "the baseline safe; no other scenario ran"
	case 1:
		return "the baseline and the scenario after it safe"
	}
	return fmt.Sprintf("the baseline and all %s after it safe", plural(n, "scenario"))
}

// groupErrors folds the error findings of all scenarios into problems, in
// order of first appearance, so that one bug seen by twenty scenarios is
// one entry that links to the twenty.
func groupErrors(scs []scenarioView) []errorGroup {
	var groups []errorGroup
	index := map[[3]string]int{}
	for _, s := range scs {
		for _, f := range s.Findings {
			if f.Severity != string(runtime.SeverityError) {
				continue
			}
			key := [3]string{f.Code, f.Ops, f.Identity}
			if f.Ops == "" && f.Identity == "" {
				key[1] = f.Message // invariants: one group per distinct failure
			}
			i, ok := index[key]
			if !ok {
				i = len(groups)
				index[key] = i
				groups = append(groups, errorGroup{Code: f.Code, Message: f.Message, Ops: f.Ops, Identity: f.Identity, Replay: f.Replay, Legend: s.Legend})
			}
			g := &groups[i]
			if n := len(g.Scenarios); n == 0 || g.Scenarios[n-1].Name != s.Name {
				g.Scenarios = append(g.Scenarios, scenarioLink{Name: s.Name, Anchor: s.Anchor, Status: s.Status})
			}
		}
	}
	return groups
}

func viewFinding(f runtime.Finding, anchor string) findingView {
	return findingView{
		Code: f.Code, Severity: string(f.Severity), Message: f.Message,
		Scenario: f.Scenario, Anchor: anchor,
		Ops: strings.Join(f.Ops, ", "), Identity: strings.Join(f.Identities, ", "),
		Calls: strings.Join(f.Calls, ", "), Replay: f.Replay, Stack: f.Stack,
	}
}

// errorLead heads a scenario's error on the page: what the agent did
// (runtime.Result.Returned).
func errorLead(res *runtime.Result) string {
	switch res.Returned() {
	case "left running":
		return "the scenario stalled and the agent did not return"
	case "cancelled":
		return "the scenario stalled and the agent returned once cancelled"
	}
	return "the agent returned an error"
}

func buildScenario(i int, res *runtime.Result, baseline bool) scenarioView {
	sv := scenarioView{
		Anchor: "s" + strconv.Itoa(i),
		Name:   res.Scenario,
		Kind:   res.Kind,
		Status: scenarioStatus(res, baseline),
		Fault:  faultLabel(res),
		Error:  res.Error,
		Replay: res.Replay,
		Legend: legendLine(res),
	}
	sv.StatusLabel, _ = statusWord(sv.Status)
	sv.ErrorLead = errorLead(res)
	sv.Open = sv.Status != statusSafe
	if sv.Fault != "" {
		sv.FaultState = "fired"
		if !res.FaultFired {
			sv.FaultState = "did not fire"
			if res.Trace != nil && res.Trace.FaultNote != "" {
				sv.FaultState += ": " + res.Trace.FaultNote
			}
		}
	}
	sv.Invariants = res.Invariants
	for _, d := range res.Duplicates {
		sv.Duplicates = append(sv.Duplicates, duplicateView{Op: d.Op, Identity: d.Identity, Count: d.Count, Calls: strings.Join(d.Calls, ", ")})
	}
	// Which calls each finding and duplicate names.
	codes, warns := map[string][]string{}, map[string][]string{}
	for _, f := range res.Findings {
		sv.Findings = append(sv.Findings, viewFinding(f, sv.Anchor))
		m := warns
		if f.Severity == runtime.SeverityError {
			m = codes
		}
		for _, c := range f.Calls {
			if !slices.Contains(m[c], f.Code) {
				m[c] = append(m[c], f.Code)
			}
		}
	}
	// The calls that repeated an effect: not the first of each
	// duplicate's calls, which made the one effect the others repeated.
	dup := map[string]bool{}
	for _, d := range res.Duplicates {
		for _, c := range d.Calls[min(1, len(d.Calls)):] {
			dup[c] = true
		}
	}
	if res.Trace == nil {
		return sv
	}
	sv.Panics = res.Trace.Panics
	sv.RunErrors = res.Trace.Errors
	sv.Notes = res.Trace.Notes
	ops := res.Trace.Ops
	sv.Calls = len(ops)
	sv.CallsLabel = plural(len(ops), "call")
	clk := newClock(ops)
	sv.Axis = clk.axis()
	if !clk.logical && clk.span > 0 {
		for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
			sv.Ticks = append(sv.Ticks, tick{Left: percent(f), Label: formatDuration(clk.at(f))})
		}
	}
	// One lane per invocation, rows in start order.
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if ops[a].Invocation != ops[b].Invocation {
			return ops[a].Invocation - ops[b].Invocation
		}
		return ops[a].Seq - ops[b].Seq
	})
	// Batches alternate two shades, numbered in order of first appearance.
	shade := map[int]int{}
	for _, i := range order {
		if b := ops[i].Batch; b > 0 {
			if _, ok := shade[b]; !ok {
				shade[b] = len(shade) % 2
			}
		}
	}
	sched := legendNumbers(res.Legend)
	for _, i := range order {
		o := &ops[i]
		if n := len(sv.Lanes); n == 0 || sv.Lanes[n-1].Invocation != o.Invocation {
			label := "invocation " + strconv.Itoa(o.Invocation)
			if o.Invocation > 1 {
				label += " (delivered again)"
			}
			sv.Lanes = append(sv.Lanes, laneView{Invocation: o.Invocation, Label: label})
		}
		lane := &sv.Lanes[len(sv.Lanes)-1]
		row := buildRow(o, clk, codes[o.ID], warns[o.ID], dup[o.ID], shade)
		row.Sched = sched[row.Call]
		lane.Rows = append(lane.Rows, row)
	}
	return sv
}

// callName names a call as a schedule's legend does (runtime's
// legendName): op#k, with the delivery in front when it is not the first;
// its ID where the trace numbers no occurrence.
func callName(o *runtime.Operation) string {
	if o.Occurrence < 1 {
		return o.ID
	}
	name := o.Name + "#" + strconv.Itoa(o.Occurrence)
	if o.Invocation > 1 {
		name = strconv.Itoa(o.Invocation) + ":" + name
	}
	return name
}

// legendNumbers reads a schedule's legend, "s0 = createInvoice#1, s1 =
// attachInvoice#1" (rounds after the first as "; round 2: ..."), into
// each call's number there: createInvoice#1 → s0, or → "round 2: s0" in
// a legend of several rounds. Nil for no legend.
func legendNumbers(legend string) map[string]string {
	if legend == "" {
		return nil
	}
	out := map[string]string{}
	for _, round := range strings.Split(legend, "; ") {
		prefix := ""
		if strings.HasPrefix(round, "round ") {
			if head, rest, ok := strings.Cut(round, ": "); ok {
				prefix, round = head+": ", rest
			}
		}
		for _, entry := range strings.Split(round, ", ") {
			if num, call, ok := strings.Cut(entry, " = "); ok {
				out[call] = prefix + num
			}
		}
	}
	return out
}

// ordinal writes n as 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st.
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// at is the time a fraction of the clock's span stands for.
func (c clock) at(f float64) time.Duration { return time.Duration(f * float64(c.span)) }

func buildRow(o *runtime.Operation, clk clock, codes, warns []string, dup bool, shade map[int]int) rowView {
	pos := clk.pos[o.ID]
	width := pos[1] - pos[0]
	if width < 0.012 {
		width = 0.012
	}
	left := pos[0]
	if left+width > 1 {
		left = 1 - width
	}
	row := rowView{
		ID: o.ID, Call: callName(o), Seq: o.Seq, Name: o.Name, Kind: o.Kind.String(),
		Left: percent(left), Width: percent(width),
		Args: argsJSON(o.Args), Identity: o.Identity, IdentityErr: o.IdentityError,
		Entity: o.Entity, Result: prettyJSON(o.Result), Error: o.Error,
		Status: string(o.Status), Observation: string(o.Observation),
		Fault: string(o.Fault), Site: o.Site, Codes: codes, Warnings: warns,
	}
	if o.Panic != nil {
		row.Panic = o.Panic.Value + "\n" + o.Panic.Stack
	}
	classes := []string{"bar", row.Kind}
	if o.Status == runtime.StatusFailed {
		classes = append(classes, "failed")
		row.Marks = append(row.Marks, "✗ failed")
	}
	if o.Status == runtime.StatusRunning {
		classes = append(classes, "running")
		row.Marks = append(row.Marks, "… running")
	}
	if o.Fault != runtime.FaultNone {
		classes = append(classes, "fault")
		row.Marks = append(row.Marks, "⚡ "+string(o.Fault))
	}
	if o.Observation == runtime.ObservationLost {
		classes = append(classes, "lost")
		if o.Fault == runtime.FaultNone {
			row.Marks = append(row.Marks, "answer lost")
		}
	}
	if o.Parent != "" {
		row.Marks = append(row.Marks, "↳ made inside "+o.Parent)
	}
	if o.Replayed {
		classes = append(classes, "replayed")
		row.Marks = append(row.Marks, "↺ replayed by the sink")
	}
	switch o.Repeat {
	case runtime.RepeatAbsorbed:
		classes = append(classes, "replayed", "absorbed")
		row.Marks = append(row.Marks, "≡ absorbed: a repeat with no further effect ("+judgedWords(o.JudgedBy)+")")
	case runtime.RepeatUpdate:
		row.Marks = append(row.Marks, "✎ update of the first effect (other arguments, same identity)")
	}
	if o.StateChange != "" {
		row.Marks = append(row.Marks, "Δ "+o.StateChange)
	}
	if o.Effective() {
		classes = append(classes, "effect")
	}
	if dup {
		classes = append(classes, "dup")
		row.Marks = append(row.Marks, "duplicate effect")
	}
	if len(codes) > 0 {
		classes = append(classes, "finding")
	} else if len(warns) > 0 {
		classes = append(classes, "warned")
	}
	row.Classes = strings.Join(classes, " ")
	if b := o.Batch; b > 0 {
		row.Batch = b
		row.BatchClass = "batch b" + strconv.Itoa(shade[b])
		p := clk.pos[o.ID]
		row.BandLeft, row.BandWidth = percent(p[0]), percent(max(p[1]-p[0], 0.012))
	}
	if clk.logical {
		// Not "#N": op#k is the call's name on this page.
		row.When = "started " + ordinal(o.Seq+1) + " of the run's calls"
	} else {
		when := fmt.Sprintf("started +%s", formatDuration(clk.at(pos[0])))
		if !o.CompletedAt.IsZero() && !o.StartedAt.IsZero() {
			when += ", took " + formatDuration(o.CompletedAt.Round(0).Sub(o.StartedAt.Round(0)))
		}
		row.When = when
	}
	title := []string{o.ID + " (" + row.Kind + ")"}
	if len(o.Args.Values) > 0 {
		title = append(title, "args: "+shorten(argsInline(o.Args), 160))
	}
	if o.Identity != "" {
		title = append(title, "identity: "+shorten(o.Identity, 120))
	}
	if o.Error != "" {
		title = append(title, "error: "+shorten(o.Error, 160))
	} else if o.Result != nil {
		title = append(title, "result: "+shorten(compactJSON(o.Result), 160))
	}
	title = append(title, "status: "+row.Status+", "+row.Observation)
	title = append(title, row.Marks...)
	for _, c := range codes {
		title = append(title, "finding: "+c)
	}
	for _, c := range warns {
		title = append(title, "warning: "+c)
	}
	title = append(title, "click for details")
	row.Title = strings.Join(title, "\n")
	return row
}
