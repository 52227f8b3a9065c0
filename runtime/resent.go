package runtime

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// A request sent again inside a call. Transport (transport.go) sees the
// HTTP requests each traced call sends, and the lost_response scenario of
// a write (FaultLostResponse) drops the answer of one of the call's
// requests that are not idempotent (the first, or the r-th: recorder.lostRequest)
// after the service got it. A client that retries
// by itself then sends that request again, inside the same call: the agent
// sees one call that succeeded, no repeat, and the judging of repeats
// (judgeRepeatsIn) has nothing to compare. What tells is the call's own
// effect: with State, its window against the baseline's same call's. A
// window that holds more of what the baseline's held (two refunds where
// it had one, a balance credited twice the amount) is the service applying
// the request twice: a duplicate_write. One that holds no more is a retry
// the service deduplicated (an Idempotency-Key it honors, a conditional
// write), and safe. Where the suite cannot compare (no State, or a window
// shared with other calls), the scenario is inconclusive, and its note
// says what it could not see.

// resentMark is the words a finding of a request sent again inside a call
// says, which Finding.GroupKey tells it by.
const resentMark = "inside the call after the injected lost response"

// sentWrite reports whether call o sent a request that is not idempotent
// through Transport: its lost_response scenario can fire.
func sentWrite(o *Operation) bool { return writeRequests(o) > 0 }

// writeRequests returns how many write requests (sentRequest.Write) write
// o sent through Transport.
func writeRequests(o *Operation) int {
	if o.Kind != KindWrite {
		return 0
	}
	n := 0
	for _, s := range o.sent() {
		if s.Write {
			n++
		}
	}
	return n
}

// lostNone notes, for the call a lost_response targets, that it sent no
// request whose answer could be lost (Finish): the scenario's
// fault_not_triggered finding says so.
func (c *Call) lostNone() {
	c.mu.Lock()
	lost := c.rec.rare != nil && c.rec.rare.lostResponse
	c.mu.Unlock()
	if r := int(c.inv.rec.lostRequest); !lost && r > 1 {
		c.inv.rec.noteUnfired(fmt.Sprintf("%s sent fewer than %d POST or PATCH requests (or requests marked with runtime.WriteRequest) through runtime.Transport that got an answer in this scenario, so the answer of its write request %d could not be lost", c.op.Name, r, r))
	} else if !lost {
		c.inv.rec.noteUnfired(fmt.Sprintf("%s sent no POST or PATCH (nor a request marked with runtime.WriteRequest) through runtime.Transport that got an answer in this scenario, so no response could be lost", c.op.Name))
	}
}

// lostAppliedLocked reports whether the call's request whose answer the
// lost_response fault dropped was answered 2xx (the service says it
// applied it) and the client did not send it again: the tool's failure
// after that is a lost acknowledgement's, its effect done. c.mu is held.
func (c *Call) lostAppliedLocked() bool {
	x := c.rec.rare
	if x == nil || !x.lostResponse {
		return false
	}
	lost, again, reworded := resentOf(x.sent)
	return (again == 0 || reworded) && lost.dropped >= 200 && lost.dropped < 300
}

// resentInside judges the lost_response scenario of run tr: where the
// faulted call's client sent the lost request again, the call's effect
// against the baseline's same call's (see above). It adds a duplicate_write
// finding, or makes the scenario inconclusive with a note, or does
// nothing (no resend; a resend the service deduplicated).
func (s *Suite) resentInside(res *Result, tr *Trace, sc Scenario, add func(Finding)) {
	if sc.Fault.Kind != FaultLostResponse || !tr.Fired || s.base == nil {
		return
	}
	var o *Operation
	for i := range tr.Ops {
		if tr.Ops[i].Fault == FaultLostResponse {
			o = &tr.Ops[i]
			break
		}
	}
	if o == nil {
		return
	}
	lost, again, reworded := resentOf(o.sent())
	if again == 0 {
		return // the error reached the tool: judged as any lost answer
	}
	what := fmt.Sprintf("%s's HTTP client sent %s %s "+resentMark+" (the first request reached the service, which answered; the client's read of the answer timed out)",
		o.ID, lost.what(), timesAgain(again))
	if reworded {
		what = fmt.Sprintf("%s's HTTP client sent %s %s "+resentMark+", with another body of the same form (the same JSON fields with other values, a token or a time made per attempt; or the same parts under a new multipart boundary), as a client that retries a request it builds anew does (the first request reached the service, which answered; the client's read of the answer timed out)",
			o.ID, lost.what(), timesAgain(again))
	}
	inconclusive := func(why string) {
		res.Inconclusive = true
		tr.Notes = append(tr.Notes, what+": "+why+"; the scenario is inconclusive (testkit.FailInconclusive fails the test on such a scenario)")
	}
	if s.cfg.state == nil {
		inconclusive("without testkit.State the suite cannot see whether the service applied it more than once; give State (a snapshot of what the service holds), or make the request idempotent at the service (an Idempotency-Key it honors, a conditional write) and say so with State")
		return
	}
	var b *Operation
	for i := range s.base.Ops {
		if p := &s.base.Ops[i]; p.Name == o.Name && p.Occurrence == o.Occurrence && p.Invocation == o.Invocation {
			b = p
			break
		}
	}
	if b != nil {
		if first, again := sentTwice(b.sent()); again != nil && baselineResent(o, b, first, inconclusive) {
			// The baseline's call is no one request's effect to
			// compare with, unless State shows it is; the call's own
			// window may show it applied once (resentbase.go).
			return
		}
	}
	if b == nil || !o.stateSeen() || !b.stateSeen() {
		inconclusive("State could not tell the call's effect apart from other calls' (its window, or the baseline's same call's, held other writes), so the suite cannot see whether the service applied it more than once")
		return
	}
	ob, oa := o.stateWindow()
	bb, ba := b.stateWindow()
	if lost.late {
		// Sent by a goroutine the call left running, after it returned
		// (leftSending): its window holds none of it, and read alone
		// it took a notifier that sent twice for one that sent once.
		// The run's end holds it, from where the call began, against
		// the baseline's.
		if tr.end == "" || s.base.end == "" {
			inconclusive("the request was sent after " + o.ID + " returned, by a goroutine it left running, so its window does not hold what the service did, and the run's end, which does, could not be read")
			return
		}
		what += " (sent after the call returned, by a goroutine it left running: this compares the run's end, from where the call began, with the baseline's)"
		oa, ba = tr.end, s.base.end
	}
	more, ok := exceeds(ob, oa, bb, ba)
	if !ok {
		inconclusive("State's snapshots around the call do not decode as JSON, so the suite cannot compare its effect with the baseline's")
		return
	}
	change := describeChange(ob, oa, maxChange)
	baseChange := describeChange(bb, ba, maxChange)
	if baseChange == "" {
		baseChange = "nothing"
	}
	if change == "" {
		change = "nothing"
	}
	if more == "" {
		if sameChange(bb, ba, ob, oa, namedIn(tr)) {
			return // the service deduplicated the retry: the baseline's change, no more
		}
		// Another change, not more of the same: a value in a form the
		// suite cannot measure (a balance inside a string), or the
		// service's own doing. Not safe, not a finding.
		inconclusive(fmt.Sprintf("State saw %s change the state by %s where the baseline's %s changed it by %s: another change, and not more entries or a number moved further, so the suite cannot tell whether the service applied the request more than once (a number kept inside a string cannot be measured: give State numbers as numbers)",
			o.ID, change, b.ID, baseChange))
		return
	}
	msg := fmt.Sprintf("%s, and the service applied it %s: %s changed the state by %s where the baseline's %s changed it by %s (%s); make the request idempotent at the service (an Idempotency-Key it honors, a conditional write), or turn the client's retries off for this request",
		what, timesApplied(again), o.ID, change, b.ID, baseChange, more)
	if !strings.Contains(more, "entr") {
		msg += "; if what it changed is bookkeeping that every request updates (a count of attempts, a version), leave that out of State"
	}
	add(Finding{Code: CodeDuplicateWrite, Severity: SeverityError, Ops: []string{o.Name}, Identities: []string{o.Identity}, Calls: []string{o.ID}, Message: msg})
	res.Duplicates = append(res.Duplicates, Duplicate{Op: o.Name, Args: o.Args, Identity: o.Identity, Count: again + 1, Calls: []string{o.ID}})
}

// sentTwice returns the first write request of sent that the call sent
// again (the same method, host, path and body), and the later one; nil
// when it sent none twice.
func sentTwice(sent []sentRequest) (first, again *sentRequest) {
	for i := range sent {
		if !sent[i].Write {
			continue
		}
		for j := i + 1; j < len(sent); j++ {
			if r := &sent[j]; r.Method == sent[i].Method && r.Host == sent[i].Host && r.Path == sent[i].Path && r.body == sent[i].body {
				return &sent[i], r
			}
		}
	}
	return nil, nil
}

// sameChange reports whether the change from a to b (the baseline's call)
// and the change from c to d (the run's) are one execution's change: the
// same, or the same up to the moments the runs' clocks stamped and the
// names the service's creates made (named: the names the run's calls
// were given, which stay).
func sameChange(a, b, c, d string, named map[string]bool) bool {
	if describeChange(a, b, -1) == describeChange(c, d, -1) {
		return true
	}
	if holdsClock(a) || holdsClock(b) || holdsClock(c) || holdsClock(d) {
		a, b, c, d = withoutClocks(a, named), withoutClocks(b, named), withoutClocks(c, named), withoutClocks(d, named)
		if describeChange(a, b, -1) == describeChange(c, d, -1) {
			return true
		}
	}
	return sameChangeUpToMadeNames(a, b, c, d, named, nil)
}

// resentOf returns the request of sent whose answer was lost, and how many
// times the call sent it again after (same method, host, path and body);
// where it sent none of the same body, how many requests of the same
// method, host and path and body shape (bodyShape) it sent after, with
// reworded true. A client that builds each attempt anew puts a token or a
// time made per attempt in the body, and its retry, of another body,
// refunded twice unseen: the whole suite read SAFE (red team rW, a refund
// token "refund-<order>-<attempt>" in the JSON body, 10 runs of 10).
func resentOf(sent []sentRequest) (lost sentRequest, again int, reworded bool) {
	at := -1
	for i, r := range sent {
		if r.Lost {
			lost, at = r, i
			break
		}
	}
	if at < 0 {
		return lost, 0, false
	}
	same := 0
	for _, r := range sent[at+1:] {
		if r.Method != lost.Method || r.Host != lost.Host || r.Path != lost.Path {
			continue
		}
		switch {
		case r.body == lost.body:
			again++
		case lost.shape != 0 && r.shape == lost.shape:
			same++
		}
	}
	if again == 0 && same > 0 {
		return lost, same, true
	}
	return lost, again, false
}

func timesAgain(n int) string {
	if n == 1 {
		return "again"
	}
	return strconv.Itoa(n) + " more times"
}

func timesApplied(again int) string {
	if again == 1 {
		return "twice"
	}
	return "more than once"
}

// exceeds compares the change from before to after (a call's window) with
// the change from baseBefore to baseAfter (the baseline's same call's), and
// says where the first holds more of what the second did: a collection
// that gained more entries, a number that moved the same way by more. ""
// when nowhere; ok is false when a snapshot does not decode.
//
// Only more of the same counts: a collection the baseline's call added
// nothing to, or a number it left as it was, is not compared (bookkeeping a
// deduplicating service keeps of each attempt, a moment stamped); a number
// counts only where it moved by a whole multiple of the baseline's move,
// twice it or more, as the same request applied again moves it (an id a
// counter handed out, 42 where the baseline got 17, is no second credit);
// a number of ten digits or more is taken for a clock, and left out. A
// number a change first made (a key added with it, as DynamoDB's ADD
// makes an item) moved from 0.
func exceeds(before, after, baseBefore, baseAfter string) (string, bool) {
	var g, bg growth
	if !g.of(before, after) || !bg.of(baseBefore, baseAfter) {
		return "", false
	}
	var out []string
	for _, p := range sortedKeys(bg.entries) {
		if n, m := g.entries[p], bg.entries[p]; m > 0 && n > m {
			out = append(out, fmt.Sprintf("%s gained %d entries where the baseline's call added %d", placeName(p), n, m))
		}
	}
	for _, p := range sortedKeys(bg.numbers) {
		d, bd := g.numbers[p], bg.numbers[p]
		if k := d / bd; bd != 0 && k >= 2 && k == math.Trunc(k) {
			out = append(out, fmt.Sprintf("%s moved by %s where the baseline's call moved it by %s", placeName(p), fmtNum(d), fmtNum(bd)))
		}
	}
	return strings.Join(out, "; "), true
}

// growth is what a change added: entries by the path of their collection,
// and the change of each number by its path.
type growth struct {
	entries map[string]int
	numbers map[string]float64
}

// of reads the change from snapshot a to snapshot b.
func (g *growth) of(a, b string) bool {
	x, err := decodeState(a)
	if err != nil {
		return false
	}
	y, err := decodeState(b)
	if err != nil {
		return false
	}
	g.entries, g.numbers = map[string]int{}, map[string]float64{}
	g.walk("", x, y)
	return true
}

// clockSized is the size from which a number is taken for a clock (a Unix
// time in seconds has ten digits).
const clockSized = 1e9

func (g *growth) walk(path string, a, b any) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return
		}
		for k, yv := range y {
			if xv, in := x[k]; in {
				g.walk(path+"\x01"+k, xv, yv)
				continue
			}
			g.entries[path]++
			if n, ok := yv.(json.Number); ok {
				g.walk(path+"\x01"+k, json.Number("0"), n)
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			return
		}
		if len(y) > len(x) {
			g.entries[path] += len(y) - len(x)
			return
		}
		if len(y) == len(x) {
			for i := range x {
				g.walk(path+"\x01["+strconv.Itoa(i)+"]", x[i], y[i])
			}
		}
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return
		}
		p, err1 := x.Float64()
		q, err2 := y.Float64()
		if err1 != nil || err2 != nil || math.Abs(p) >= clockSized || math.Abs(q) >= clockSized {
			return
		}
		if q != p {
			g.numbers[path] = q - p
		}
	case nil:
		// A collection first made by the change: its entries are added.
		switch y := b.(type) {
		case map[string]any:
			g.entries[path] += len(y)
		case []any:
			g.entries[path] += len(y)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// placeName is a growth path in words ("state" for the whole).
func placeName(p string) string {
	if p == "" {
		return "the state"
	}
	return strings.ReplaceAll(strings.TrimPrefix(p, "\x01"), "\x01", ".")
}

func fmtNum(f float64) string {
	if f > 0 {
		return "+" + strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
