package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// Verdicts of a whole report.
const (
	VerdictSafe           = "SAFE"
	VerdictUnsafe         = "UNSAFE"
	VerdictBaselineFailed = "BASELINE FAILED"
	// VerdictInconclusive: no error finding, but at least one planned fault
	// never fired, so that scenario proved nothing.
	VerdictInconclusive = "INCONCLUSIVE"
)

// Verdict returns the one-word outcome of a report: BASELINE FAILED when
// the agent failed without faults, UNSAFE when any scenario has an error
// finding, INCONCLUSIVE when none has but a planned fault never fired, else
// SAFE.
//
// A baseline cut short by a stall that was slow, not stuck (every
// goroutine it waited for asleep in a retry's back-off past StallTimeout:
// a warning) did not fail: nothing failed and nothing unsafe was seen, but
// no scenario ran, and the report is INCONCLUSIVE. Told BASELINE FAILED,
// its headline contradicted its own warning, "inconclusive, not failed",
// and go test's PASS (red team rZ #4: openai-go honouring a 12 s
// Retry-After).
func Verdict(r *runtime.Report) string {
	switch {
	case !r.BaselineSucceeded && baselineCutShort(r.Baseline):
		return VerdictInconclusive
	case !r.BaselineSucceeded:
		return VerdictBaselineFailed
	case !r.Safe:
		return VerdictUnsafe
	case r.InconclusiveCount > 0 || r.Baseline != nil && r.Baseline.Inconclusive:
		// The baseline is inconclusive when a goroutine it left made
		// calls after it ended (runtime's late calls).
		return VerdictInconclusive
	}
	return VerdictSafe
}

// baselineCutShort reports whether baseline result res ended at a stall
// that was slow, not stuck: a stalled warning (runtime's slowStallText),
// the result inconclusive, and no error finding. The agent's error is then
// the harness's cancellation of it, not a failure of its own.
func baselineCutShort(res *runtime.Result) bool {
	if res == nil || !res.Inconclusive {
		return false
	}
	stalled := false
	for _, f := range res.Findings {
		switch {
		case f.Severity == runtime.SeverityError, f.Code == runtime.CodeBaselineFailed:
			return false
		case f.Code == runtime.CodeStalled:
			stalled = true
		}
	}
	return stalled
}

// Scenario statuses.
const (
	statusSafe         = "safe"
	statusUnsafe       = "unsafe"
	statusInconclusive = "inconclusive"
	statusFailed       = "failed" // a failed baseline
)

// scenarioStatus classifies one result. An error finding wins over
// inconclusive: a duplicate seen is a duplicate, whatever else happened.
//
// The baseline is failed when the agent failed without a fault; a baseline
// that ran but broke an invariant or wrote twice is unsafe like any scenario.
func scenarioStatus(res *runtime.Result, baseline bool) string {
	if baseline && baselineCutShort(res) {
		return statusInconclusive
	}
	if baseline && res.Failed {
		return statusFailed
	}
	for _, f := range res.Findings {
		if baseline && f.Code == runtime.CodeBaselineFailed {
			return statusFailed
		}
	}
	for _, f := range res.Findings {
		if f.Severity == runtime.SeverityError {
			return statusUnsafe
		}
	}
	if res.Inconclusive {
		return statusInconclusive
	}
	return statusSafe
}

// scenarios returns the baseline (when present) and the fault scenarios, in
// the order they ran.
func scenarios(r *runtime.Report) []*runtime.Result {
	out := make([]*runtime.Result, 0, 1+len(r.Results)) // not grown by doubling
	if r.Baseline != nil {
		out = append(out, r.Baseline)
	}
	for _, res := range r.Results {
		if res != nil {
			out = append(out, res)
		}
	}
	return out
}

// firedCount counts the fault scenarios whose fault fired.
func firedCount(r *runtime.Report) int {
	n := 0
	for _, res := range r.Results {
		if res != nil && res.FaultFired {
			n++
		}
	}
	return n
}

// plannedCount counts the fault scenarios that plan a fault (duplicate
// delivery plans none: it delivers twice).
func plannedCount(r *runtime.Report) int {
	n := 0
	for _, res := range r.Results {
		if res != nil && faultLabel(res) != "" {
			n++
		}
	}
	return n
}

// faultLabel describes a result's planned fault: "refund#1 lost_acknowledgement".
func faultLabel(res *runtime.Result) string {
	if res.Fault == nil || res.Fault.Kind == runtime.FaultNone {
		return ""
	}
	return res.Fault.String()
}

// normalJSON renders v as compact JSON with sorted object keys, so that a
// struct in a live report and the map read back from its JSON print alike.
// Scalars take a fast path.
func normalJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return quoteJSON(x)
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case json.Number:
		return x.String()
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return quoteJSON(fmt.Sprintf("<%T: not JSON: %v>", v, err))
	}
	var generic any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // html/template escapes; keep the text readable
	if err := enc.Encode(generic); err != nil {
		return string(raw)
	}
	return strings.TrimRight(b.String(), "\n")
}

// prettyJSON renders v as indented JSON with sorted keys, "" for nil.
func prettyJSON(v any) string {
	if v == nil {
		return ""
	}
	return indentJSON(normalJSON(v))
}

// argsJSON renders recorded arguments as an indented JSON object in
// parameter order (argument order is meaningful; nested values get sorted
// keys).
func argsJSON(a runtime.Args) string {
	if len(a.Values) == 0 {
		return "{}"
	}
	var b strings.Builder
	b.WriteString("{\n")
	for i, v := range a.Values {
		name := "arg" + strconv.Itoa(i)
		if i < len(a.Names) {
			name = a.Names[i]
		}
		val := indentJSON(normalJSON(v))
		fmt.Fprintf(&b, "  %s: %s", quoteJSON(name), strings.ReplaceAll(val, "\n", "\n  "))
		if i < len(a.Values)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteByte('}')
	return b.String()
}

// argsInline renders arguments on one line, for hover titles and text.
func argsInline(a runtime.Args) string {
	parts := make([]string, 0, len(a.Values))
	for i, v := range a.Values {
		name := "arg" + strconv.Itoa(i)
		if i < len(a.Names) {
			name = a.Names[i]
		}
		parts = append(parts, name+"="+compactJSON(v))
	}
	return strings.Join(parts, ", ")
}

// compactJSON renders v as one line of JSON with sorted keys.
func compactJSON(v any) string { return normalJSON(v) }

func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimRight(b.String(), "\n")
}

// shorten cuts s to n runes with an ellipsis, for one-line labels.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// formatDuration prints d with at most three significant figures.
func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Microsecond:
		return d.String()
	case d < time.Millisecond:
		return d.Round(10 * time.Nanosecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// clock places the calls of one trace on a horizontal axis from 0 to 1.
//
// When the calls span a measurable stretch of (wall or virtual) time, at
// least minTimeSpan, positions are proportional to time. Otherwise
// durations are ~0 and time says nothing, so the axis is a logical clock:
// every start and every completion is one tick, in time order with ties
// broken by the call sequence. Calls of one parallel batch (Batch > 0) are
// stretched over the whole batch, since they were in flight together.
type clock struct {
	logical bool
	span    time.Duration // time mode only
	ticks   int           // logical mode only
	pos     map[string][2]float64
}

const minTimeSpan = time.Millisecond

func newClock(ops []runtime.Operation) clock {
	c := clock{pos: make(map[string][2]float64, len(ops))}
	if len(ops) == 0 {
		return c
	}
	var first, last time.Time
	complete := true
	for i := range ops {
		o := &ops[i]
		s := o.StartedAt.Round(0)
		if s.IsZero() {
			complete = false
			break
		}
		e := o.CompletedAt.Round(0)
		if e.IsZero() {
			e = s
		}
		if first.IsZero() || s.Before(first) {
			first = s
		}
		if e.After(last) {
			last = e
		}
	}
	if complete && last.Sub(first) >= minTimeSpan {
		c.span = last.Sub(first)
		for i := range ops {
			o := &ops[i]
			s := o.StartedAt.Round(0).Sub(first)
			e := c.span // still running when the trace was taken
			if !o.CompletedAt.IsZero() {
				e = o.CompletedAt.Round(0).Sub(first)
			}
			c.pos[o.ID] = [2]float64{float64(s) / float64(c.span), float64(e) / float64(c.span)}
		}
		c.stretchBatches(ops)
		return c
	}
	c.logical = true
	type event struct {
		at    time.Time
		seq   int
		end   bool
		id    string
		index int
	}
	evs := make([]event, 0, 2*len(ops))
	for i := range ops {
		o := &ops[i]
		evs = append(evs, event{at: o.StartedAt.Round(0), seq: o.Seq, id: o.ID})
		end := o.CompletedAt.Round(0)
		if end.IsZero() || end.Before(o.StartedAt.Round(0)) {
			end = o.StartedAt.Round(0)
		}
		evs = append(evs, event{at: end, seq: o.Seq, end: true, id: o.ID})
	}
	sort.SliceStable(evs, func(i, j int) bool {
		a, b := evs[i], evs[j]
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		if a.seq != b.seq {
			return a.seq < b.seq
		}
		return !a.end && b.end
	})
	c.ticks = len(evs)
	start := map[string]int{}
	for i, e := range evs {
		if !e.end {
			start[e.id] = i
			continue
		}
		s := start[e.id]
		c.pos[e.id] = [2]float64{float64(s) / float64(c.ticks), float64(i+1) / float64(c.ticks)}
	}
	c.stretchBatches(ops)
	return c
}

// stretchBatches gives every call of a batch the union of the batch's spans.
func (c *clock) stretchBatches(ops []runtime.Operation) {
	union := map[int][2]float64{}
	for i := range ops {
		b := ops[i].Batch
		if b <= 0 {
			continue
		}
		p := c.pos[ops[i].ID]
		u, ok := union[b]
		if !ok {
			union[b] = p
			continue
		}
		union[b] = [2]float64{min(u[0], p[0]), max(u[1], p[1])}
	}
	for i := range ops {
		if b := ops[i].Batch; b > 0 {
			c.pos[ops[i].ID] = union[b]
		}
	}
}

// axis describes the clock for a legend.
func (c clock) axis() string {
	if c.logical {
		return "logical clock: call starts and completions in order (durations were ~0)"
	}
	return "time since the first call, total " + formatDuration(c.span)
}

// percent formats a fraction as a CSS percentage number with fixed
// precision, so output bytes do not depend on float printing.
func percent(f float64) string {
	if f < 0 {
		f = 0
	}
	if f > 1 {
		f = 1
	}
	return strconv.FormatFloat(f*100, 'f', 2, 64)
}
