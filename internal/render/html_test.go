package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"golang.org/x/net/html"
)

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func renderHTML(t testing.TB, rep *runtime.Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := HTML(&buf, rep); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	return buf.Bytes()
}

func parseHTML(t testing.TB, b []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("parsing the page: %v", err)
	}
	return doc
}

// walk calls fn for every element under n.
func walk(n *html.Node, fn func(*html.Node)) {
	if n.Type == html.ElementNode {
		fn(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func hasClass(n *html.Node, class string) bool {
	v, _ := attr(n, "class")
	return slices.Contains(strings.Fields(v), class)
}

// find returns the elements with the tag (any when "") and all the classes.
func find(doc *html.Node, tag string, classes ...string) []*html.Node {
	var out []*html.Node
	walk(doc, func(n *html.Node) {
		if tag != "" && n.Data != tag {
			return
		}
		for _, c := range classes {
			if !hasClass(n, c) {
				return
			}
		}
		out = append(out, n)
	})
	return out
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}

// sections maps scenario names to their timeline sections.
func sections(doc *html.Node) map[string]*html.Node {
	m := map[string]*html.Node{}
	for _, sec := range find(doc, "details", "scenario") {
		name, _ := attr(sec, "data-scenario")
		m[name] = sec
	}
	return m
}

// allowedTags are the only elements the page may contain: anything else
// (img, iframe, svg, a second style...) came from a trace.
var allowedTags = map[string]bool{
	"html": true, "head": true, "body": true, "meta": true, "title": true, "style": true, "script": true,
	"header": true, "main": true, "footer": true, "section": true, "div": true, "span": true, "p": true,
	"h1": true, "h2": true, "h3": true, "dl": true, "dt": true, "dd": true, "ol": true, "ul": true, "li": true,
	"a": true, "code": true, "pre": true, "b": true, "button": true, "details": true, "summary": true,
	"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
}

// errorer is the part of testing.T that assertInert uses.
type errorer interface {
	Helper()
	Errorf(format string, args ...any)
}

// fakeT records whether a check failed.
type fakeT struct{ failed bool }

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }

// assertInert checks that a parsed page holds nothing but its own markup:
// only allowed elements, one style and one script (the package's own), no
// event-handler or resource attribute, links only to its own anchors.
func assertInert(t errorer, doc *html.Node) {
	t.Helper()
	var scripts, styles int
	walk(doc, func(n *html.Node) {
		if !allowedTags[n.Data] {
			t.Errorf("injected element <%s> in the page", n.Data)
		}
		switch n.Data {
		case "script":
			scripts++
			if got := textOf(n); got != jsSource {
				t.Errorf("script content is not the package's own script: %.80q", got)
			}
		case "style":
			styles++
			if got := textOf(n); got != cssSource {
				t.Errorf("style content is not the package's own CSS: %.80q", got)
			}
		}
		for _, a := range n.Attr {
			k := strings.ToLower(a.Key)
			switch {
			case strings.HasPrefix(k, "on"):
				t.Errorf("event handler attribute %s=%q on <%s>", a.Key, a.Val, n.Data)
			case k == "src" || k == "srcdoc" || k == "formaction" || k == "action" || k == "x" || k == "'":
				t.Errorf("injected attribute %s=%q on <%s>", a.Key, a.Val, n.Data)
			case k == "href" && !strings.HasPrefix(a.Val, "#s"):
				t.Errorf("link to %q on <%s>", a.Val, n.Data)
			case k == "style" && strings.ContainsAny(a.Val, "<>\"'(){}"):
				t.Errorf("style attribute %q on <%s>", a.Val, n.Data)
			}
		}
	})
	if scripts != 1 || styles != 1 {
		t.Errorf("page has %d scripts and %d styles, want 1 and 1", scripts, styles)
	}
}

func TestHTMLEscapesEverythingFromTraces(t *testing.T) {
	rep := hostileReport()
	out := renderHTML(t, rep)
	doc := parseHTML(t, out)
	assertInert(t, doc)

	// The payloads are there, as text a reader can see.
	body := find(doc, "body")[0]
	text := textOf(body)
	for _, p := range payloads {
		if !strings.Contains(text, p) {
			t.Errorf("payload %q is not shown as text", p)
		}
	}
	// Raw markup never reaches the byte stream unescaped.
	for _, raw := range []string{"<script>alert", "<img", "<style>body", "<evil"} {
		if bytes.Contains(out, []byte(raw)) {
			t.Errorf("output contains raw %q", raw)
		}
	}
	// Hover titles and copy buttons carry the data as attribute values.
	var titles int
	walk(doc, func(n *html.Node) {
		if v, ok := attr(n, "title"); ok && strings.Contains(v, xssScript) {
			titles++
		}
	})
	if titles == 0 {
		t.Error("no hover title shows the call's payload")
	}
}

// TestAssertInertCatchesInjection proves the check above fails on pages
// that a renderer without escaping would produce.
func TestAssertInertCatchesInjection(t *testing.T) {
	for _, page := range []string{
		`<html><body><p>` + xssScript + `</p></body></html>`,
		`<html><body><p title="` + xssAttr + `"></p></body></html>`,
		`<html><body><p title='` + xssQuote + `'></p></body></html>`,
		`<html><head><style>` + cssSource + `</style>` + xssStyle + `</head></html>`,
	} {
		ft := &fakeT{}
		assertInert(ft, parseHTML(t, []byte(page)))
		if !ft.failed {
			t.Errorf("assertInert accepted an injected page: %s", page)
		}
	}
}

func TestHTMLContentSecurityPolicy(t *testing.T) {
	doc := parseHTML(t, renderHTML(t, naiveReport(t)))
	var policy string
	walk(doc, func(n *html.Node) {
		if v, _ := attr(n, "http-equiv"); v == "Content-Security-Policy" {
			policy, _ = attr(n, "content")
		}
	})
	sum := sha256.Sum256([]byte(jsSource))
	for _, want := range []string{"default-src 'none'", "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"} {
		if !strings.Contains(policy, want) {
			t.Errorf("policy %q lacks %q", policy, want)
		}
	}
	if strings.Contains(policy, "unsafe-inline'; script") || strings.Contains(policy, "script-src 'unsafe-inline'") {
		t.Errorf("policy allows inline scripts: %q", policy)
	}
}

func TestHTMLShowsTheNaiveAgentsBug(t *testing.T) {
	rep := naiveReport(t)
	doc := parseHTML(t, renderHTML(t, rep))
	assertInert(t, doc)

	header := find(doc, "header", "verdict")
	if len(header) != 1 {
		t.Fatalf("%d verdict headers", len(header))
	}
	if v, _ := attr(header[0], "data-verdict"); v != VerdictUnsafe {
		t.Errorf("verdict %q, want %q", v, VerdictUnsafe)
	}
	secs := find(doc, "details", "scenario")
	if want := 1 + len(rep.Results); len(secs) != want {
		t.Errorf("%d scenario sections, want %d", len(secs), want)
	}
	byName := sections(doc)
	// Problems first: the two unsafe scenarios lead the timelines.
	var lead []string
	for _, sec := range secs[:2] {
		name, _ := attr(sec, "data-scenario")
		lead = append(lead, name)
	}
	if want := []string{"lost_acknowledgement/refund#1", "duplicate_delivery/concurrent"}; !slices.Equal(lead, want) {
		t.Errorf("timelines start with %q, want %q", lead, want)
	}
	// One row per recorded call, in every scenario.
	for _, res := range scenarios(rep) {
		sec := byName[res.Scenario]
		if sec == nil {
			t.Errorf("no section for %s", res.Scenario)
			continue
		}
		rows := find(sec, "details", "call")
		if len(rows) != len(res.Trace.Ops) {
			t.Errorf("%s: %d timeline rows, want %d", res.Scenario, len(rows), len(res.Trace.Ops))
		}
		status, _ := attr(sec, "data-status")
		_, open := attr(sec, "open")
		if open != (status != statusSafe) {
			t.Errorf("%s: status %s, open %v: unsafe scenarios open, safe ones closed", res.Scenario, status, open)
		}
	}
	// The page leads with the two problems, each linking to the two unsafe
	// scenarios that show it; their duplicate refunds are the marked bars.
	var problems []string
	for _, g := range find(doc, "div", "egroup") {
		code, _ := attr(g, "data-code")
		var seen []string
		for _, a := range find(g, "a", "chip") {
			s, _ := attr(a, "data-scenario")
			seen = append(seen, s)
		}
		problems = append(problems, code+" in "+strings.Join(seen, ", "))
	}
	want := []string{
		"duplicate_write in lost_acknowledgement/refund#1, duplicate_delivery/concurrent",
		"invariant_failed in lost_acknowledgement/refund#1, duplicate_delivery/concurrent",
	}
	if !slices.Equal(problems, want) {
		t.Errorf("what went wrong lists %q, want %q", problems, want)
	}
	for _, sec := range secs {
		name, _ := attr(sec, "data-scenario")
		var marked []string
		for _, row := range find(sec, "details", "call") {
			if len(find(row, "span", "bar", "finding")) > 0 {
				id, _ := attr(row, "data-call")
				marked = append(marked, id)
			}
		}
		// Exactly the calls the error findings name; which delivery made
		// which call varies between runs of the concurrent scenario.
		var want []string
		for _, f := range rep.Findings {
			if f.Scenario == name && f.Severity == runtime.SeverityError {
				for _, c := range f.Calls {
					if !slices.Contains(want, c) {
						want = append(want, c)
					}
				}
			}
		}
		if (name == "lost_acknowledgement/refund#1" || name == "duplicate_delivery/concurrent") && len(want) != 2 {
			t.Errorf("%s: error findings name calls %q, want two refunds", name, want)
		}
		slices.Sort(want)
		slices.Sort(marked)
		if !slices.Equal(marked, want) {
			t.Errorf("%s: bars marked by a finding %q, want %q", name, marked, want)
		}
		if name == "lost_acknowledgement/refund#1" {
			if n := len(find(sec, "span", "bar", "fault")); n != 1 {
				t.Errorf("%s: %d fault bars, want 1", name, n)
			}
		}
	}
	// The repeat is the duplicate effect; the first refund made the one
	// effect it repeated, and is not marked so (red team rtV, item 22b).
	for _, res := range scenarios(rep) {
		for _, d := range res.Duplicates {
			for i, c := range d.Calls {
				for _, row := range find(byName[res.Scenario], "details", "call") {
					if id, _ := attr(row, "data-call"); id != c {
						continue
					}
					title, _ := attr(find(row, "summary")[0], "title")
					if got := strings.Contains(title, "duplicate effect"); got != (i > 0) {
						t.Errorf("%s: call %s (%d of the duplicate's calls) marked duplicate effect: %v", res.Scenario, c, i+1, got)
					}
				}
			}
		}
	}
	// A call's hover title and its details carry args, identity, result.
	row := find(byName["lost_acknowledgement/refund#1"], "details", "call")[1]
	title, _ := attr(find(row, "summary")[0], "title")
	for _, want := range []string{"1:refund#1 (write)", `args: id="payment-123"`, `identity: "payment-123"`, "⚡ lost_acknowledgement", "finding: duplicate_write"} {
		if !strings.Contains(title, want) {
			t.Errorf("hover title lacks %q:\n%s", want, title)
		}
	}
	details := textOf(find(row, "dl", "detail")[0])
	for _, want := range []string{"args{\n  \"id\": \"payment-123\"\n}", "identity\"payment-123\"", `"refund_id": "re_1"`, "never received the answer"} {
		if !strings.Contains(details, want) {
			t.Errorf("details lack %q:\n%s", want, details)
		}
	}
	// Every scenario carries its replay line.
	for _, res := range scenarios(rep) {
		var found bool
		for _, c := range find(byName[res.Scenario], "code") {
			if textOf(c) == res.Replay {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: replay line %q missing", res.Scenario, res.Replay)
		}
	}
}

func TestHTMLSafeReport(t *testing.T) {
	doc := parseHTML(t, renderHTML(t, keyedReport(t)))
	if v, _ := attr(find(doc, "header", "verdict")[0], "data-verdict"); v != VerdictSafe {
		t.Errorf("verdict %q, want SAFE", v)
	}
	if n := len(find(doc, "div", "egroup")); n != 0 {
		t.Errorf("%d error groups in a safe report", n)
	}
	for _, sec := range find(doc, "details", "scenario") {
		if n := len(find(sec, "span", "bar", "finding")); n != 0 {
			t.Errorf("%d bars marked by findings in a safe report", n)
		}
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	// The refund report has ~0 durations (logical clock); the invoices one
	// ran schedules for milliseconds (time axis) and has parallel batches.
	for _, rep := range []*runtime.Report{naiveReport(t), adjustReport(t)} {
		t.Run(rep.Name, func(t *testing.T) { checkDeterministic(t, rep) })
	}
}

func checkDeterministic(t *testing.T, rep *runtime.Report) {
	back := roundTrip(t, rep)
	for name, fn := range map[string]func(*runtime.Report) []byte{
		"html":  func(r *runtime.Report) []byte { return renderHTML(t, r) },
		"junit": func(r *runtime.Report) []byte { return renderJUnit(t, r) },
		"text":  func(r *runtime.Report) []byte { return []byte(Text(r)) },
	} {
		a, b, c := fn(rep), fn(rep), fn(back)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two renders of one report differ", name)
		}
		// A saved report renders like the live one: results are printed
		// from JSON with sorted keys either way.
		if !bytes.Equal(a, c) {
			t.Errorf("%s: the report read back from JSON renders differently:\n%s", name, firstDiff(a, c))
		}
	}
}

// TestRenderIncompleteReports: a report cut short (no baseline, a result
// without a trace) renders without panicking and says the baseline failed.
func TestRenderIncompleteReports(t *testing.T) {
	for _, rep := range []*runtime.Report{
		{SchemaVersion: "1", Name: "T"},
		{SchemaVersion: "1", Name: "T", BaselineFailure: "setup: db down",
			Baseline: &runtime.Result{Scenario: "baseline", Kind: "baseline", Failed: true, Error: "setup: db down"},
			Results:  []*runtime.Result{nil, {Scenario: "x", Kind: "x"}}},
	} {
		if got := Text(rep); !strings.HasPrefix(got, "agentidem T: BASELINE FAILED") {
			t.Errorf("Text: %q", got)
		}
		doc := parseHTML(t, renderHTML(t, rep))
		assertInert(t, doc)
		if v, _ := attr(find(doc, "header", "verdict")[0], "data-verdict"); v != VerdictBaselineFailed {
			t.Errorf("verdict %q", v)
		}
		parseJUnit(t, renderJUnit(t, rep))
	}
}

func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(i-80, 0)
	return "live:  " + string(a[lo:min(i+80, len(a))]) + "\nsaved: " + string(b[lo:min(i+80, len(b))])
}

func TestClockLogicalWhenDurationsAreZero(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ops := []runtime.Operation{
		{ID: "a", Seq: 0, StartedAt: t0, CompletedAt: t0},
		{ID: "b", Seq: 1, StartedAt: t0, CompletedAt: t0},
		{ID: "c", Seq: 2, StartedAt: t0, CompletedAt: t0},
	}
	c := newClock(ops)
	if !c.logical {
		t.Fatal("identical timestamps must give the logical clock")
	}
	// Each call is one start and one completion tick, in seq order.
	want := map[string][2]float64{"a": {0, 2.0 / 6}, "b": {2.0 / 6, 4.0 / 6}, "c": {4.0 / 6, 1}}
	for id, w := range want {
		if c.pos[id] != w {
			t.Errorf("%s at %v, want %v", id, c.pos[id], w)
		}
	}
}

func TestClockTimeWhenMeasurable(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ops := []runtime.Operation{
		{ID: "a", Seq: 0, StartedAt: t0, CompletedAt: t0.Add(10 * time.Millisecond)},
		{ID: "b", Seq: 1, StartedAt: t0.Add(5 * time.Millisecond), CompletedAt: t0.Add(40 * time.Millisecond)},
	}
	c := newClock(ops)
	if c.logical || c.span != 40*time.Millisecond {
		t.Fatalf("logical %v span %v, want time over 40ms", c.logical, c.span)
	}
	if c.pos["a"] != [2]float64{0, 0.25} || c.pos["b"] != [2]float64{0.125, 1} {
		t.Errorf("positions %v", c.pos)
	}
}

func TestBatchesAreShaded(t *testing.T) {
	batches := map[string]int{"a": 1, "b": 1, "c": 2}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(seq int, name string) runtime.Operation {
		return runtime.Operation{ID: "1:" + name + "#1", Name: name, Kind: runtime.KindWrite, Seq: seq, Invocation: 1, Batch: batches[name],
			Status: runtime.StatusSuccess, Observation: runtime.ObservationReceived, StartedAt: t0, CompletedAt: t0}
	}
	res := &runtime.Result{Scenario: "interleaving/b,a", Kind: "interleaving", OperationIndex: -1, Safe: true,
		Trace: &runtime.Trace{Ops: []runtime.Operation{mk(0, "a"), mk(1, "b"), mk(2, "c"), mk(3, "d")}, Invocations: 1}}
	rep := &runtime.Report{SchemaVersion: "1", Name: "T", Safe: true, BaselineSucceeded: true,
		Baseline: &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true, Trace: &runtime.Trace{}},
		Results:  []*runtime.Result{res}}
	doc := parseHTML(t, renderHTML(t, rep))
	rows := find(doc, "details", "call")
	if len(rows) != 4 {
		t.Fatalf("%d rows", len(rows))
	}
	shade := func(i int) string {
		s := find(rows[i], "summary")[0]
		switch {
		case hasClass(s, "b0"):
			return "b0"
		case hasClass(s, "b1"):
			return "b1"
		}
		return ""
	}
	if got := []string{shade(0), shade(1), shade(2), shade(3)}; !slices.Equal(got, []string{"b0", "b0", "b1", ""}) {
		t.Errorf("row shades %q: a batch shares a shade, the next alternates, no batch is unshaded", got)
	}
	// Calls of one batch span the same stretch of the axis.
	left := func(i int) string {
		v, _ := attr(find(rows[i], "span", "bar")[0], "style")
		return v
	}
	if left(0) != left(1) || left(0) == left(2) {
		t.Errorf("batch bars %q %q %q: batch 1 must share its span", left(0), left(1), left(2))
	}
	if n := len(find(doc, "span", "band")); n != 3 {
		t.Errorf("%d batch bands, want 3", n)
	}
}

// A call made inside another (a tool calling a tool) says so in its marks.
func TestNestedCallNamesItsParent(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	op := func(seq int, id, name, parent string) runtime.Operation {
		return runtime.Operation{ID: id, Name: name, Kind: runtime.KindWrite, Seq: seq, Invocation: 1, Parent: parent,
			Status: runtime.StatusSuccess, Observation: runtime.ObservationReceived, StartedAt: t0, CompletedAt: t0}
	}
	rep := &runtime.Report{SchemaVersion: "1", Name: "T", Safe: true, BaselineSucceeded: true,
		Baseline: &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true,
			Trace: &runtime.Trace{Invocations: 1, Ops: []runtime.Operation{op(0, "1:close_all#1", "close_all", ""), op(1, "1:set_status#1", "set_status", "1:close_all#1")}}}}
	doc := parseHTML(t, renderHTML(t, rep))
	rows := find(doc, "details", "call")
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	if outer := textOf(rows[0]); strings.Contains(outer, "made inside") {
		t.Errorf("the outer call says it was made inside another: %q", outer)
	}
	if inner := textOf(rows[1]); !strings.Contains(inner, "↳ made inside 1:close_all#1") {
		t.Errorf("the nested call does not name its parent: %q", inner)
	}
}

// A scenario's trace notes (why it was not judged, or did not run: go test
// -failfast ran no subtest for it) are shown under the scenario; the page
// showed only the fault's note, and a scenario not run read as an
// inconclusive one with no reason.
func TestHTMLShowsAScenariosNotes(t *testing.T) {
	rep := keyedReport(t)
	const note = "not run: go test ran no subtest for it: -failfast stops running subtests once a test has failed"
	res := rep.Results[0]
	res.Trace.Notes = append(res.Trace.Notes, note)
	doc := parseHTML(t, renderHTML(t, rep))
	var shown []string
	for _, sec := range find(doc, "details", "scenario") {
		if v, _ := attr(sec, "data-scenario"); v != res.Scenario {
			continue
		}
		for _, p := range find(sec, "p", "note") {
			shown = append(shown, textOf(p))
		}
	}
	if !slices.Contains(shown, "note: "+note) {
		t.Errorf("scenario %s shows notes %q, want %q among them", res.Scenario, shown, note)
	}
}
