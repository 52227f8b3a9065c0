package runtime

import (
	"regexp"
	"slices"
	"strings"
)

// Occurrence is one scenario that shows a finding, with the line that
// replays it.
type Occurrence struct {
	Scenario string `json:"scenario"`
	Replay   string `json:"replay"`
}

// GroupKey identifies the problem a finding is about: its code, ops and
// identities (for invariant_failed, the invariant's name; for
// context_detached, its severity too, and, when it names no op, its
// message: a tool given a context not the agent's at one site is a
// warning, a call of an op refused is an error, one the run could not
// tell was its own a warning, and none is another). Findings of several
// scenarios with one key are one problem, reported once.
func (f Finding) GroupKey() string {
	var buf [128]byte
	return string(f.appendGroupKey(buf[:0]))
}

// appendGroupKey appends f's GroupKey to b: GroupFindings looks a key up
// in its map without making it a string, and makes one only for a new
// problem.
func (f *Finding) appendGroupKey(b []byte) []byte {
	b = append(b, f.Code...)
	b = append(b, 0)
	b = appendJoined(b, f.Ops)
	if f.Code == CodeIdentityUnstable {
		// Its identities are fresh per attempt: the op is the problem. A
		// warning (a retry the suite cannot tell from other work) and an
		// error (a retry, a delivery made again, under a fresh key) are
		// two: an error printed as "as in" a warning read as the warning.
		b = append(b, 0)
		return append(b, f.Severity...)
	}
	b = append(b, 0)
	b = appendJoined(b, f.Identities)
	if f.Code == CodeInvariantFailed {
		if m := invariantName.FindStringSubmatch(f.Message); m != nil {
			b = append(b, 0)
			b = append(b, m[1]...)
		}
	}
	if f.Code == CodeContextDetached {
		// A refused or unattributed call names its op; a tool given a
		// context not the agent's names its site, in its message.
		b = append(b, 0)
		b = append(b, f.Severity...)
		if len(f.Ops) == 0 {
			b = append(b, 0)
			b = append(b, firstLine(f.Message)...)
		}
	}
	if f.Code == CodeAgentPanic || f.Code == CodeBaselineFailed {
		b = append(b, 0)
		b = append(b, firstLine(f.Message)...)
	}
	if f.Code == CodeDuplicateWrite && holdsResentMark(f.Message) {
		// A request the client sent again inside one call (resent.go)
		// is another problem than the agent's repeat of the call, with
		// another fix (the client's retries, not the agent's): printed
		// as "as in" a crash's duplicate, its own message was never.
		b = append(b, "\x00inside"...)
	}
	return b
}

// appendJoined appends ss joined by commas, as strings.Join(ss, ",").
func appendJoined(b []byte, ss []string) []byte {
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s...)
	}
	return b
}

// holdsResentMark says whether msg contains resentMark, as
// strings.Contains: it looks for the mark's first 'j', a letter English
// prose seldom has, and compares the mark where one stands. A
// duplicate_write's message is some 400 to 1,000 bytes, and
// strings.Contains, stopping at every 'i' (the mark's first letter),
// took 17 us of the ten-write suite's 75 (Report.tally).
func holdsResentMark(msg string) bool {
	const at = len("inside the call after the in") // the mark's first 'j'
	for from := at; from < len(msg); {
		j := strings.IndexByte(msg[from:], 'j')
		if j < 0 {
			return false
		}
		p := from + j - at
		if strings.HasPrefix(msg[p:], resentMark) {
			return true
		}
		from += j + 1
	}
	return false
}

var invariantName = regexp.MustCompile(`^invariant ("(?:[^"\\]|\\.)*") failed`)

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// GroupFindings merges findings about one problem (same GroupKey) into one,
// in order of first appearance: the first one's text, with SeenIn listing
// every scenario that shows it and its replay line, each scenario once.
//
// A scenario may show one problem in two findings: a goroutine_leak for
// the call a goroutine of an earlier scenario made during its run
// (amidLate) and one for the call its own goroutine made after it
// (reportLate), both on notify. SeenIn listed such a scenario twice, and
// the summary's problem line read "lost_request/notify#1,
// lost_request/notify#1, ..." (red team rtK, rtk/late TestLate1500ms).
func GroupFindings(fs []Finding) []Finding {
	if len(fs) == 0 {
		return []Finding{}
	}
	// Two passes: each finding's problem, by its key (built in one
	// buffer, a string only for a new problem), then the problems with
	// their SeenIn lists cut from one array. Grown finding by finding,
	// the keys, the list and each SeenIn were 1.5 allocations a finding,
	// 125 of the ten-write suite's 4,621 (80 findings in 9 problems).
	at := make(map[string]int, 16)
	problem := make([]int, len(fs)) // each finding's problem, by position in firsts
	var firsts []int                // the first finding of each problem
	var kb [128]byte
	for i := range fs {
		k := fs[i].appendGroupKey(kb[:0])
		p, ok := at[string(k)]
		if !ok {
			p = len(firsts)
			at[string(k)] = p
			firsts = append(firsts, i)
		}
		problem[i] = p
	}
	seen := make([]int, len(firsts))
	for _, p := range problem {
		seen[p]++
	}
	out := make([]Finding, len(firsts))
	occs := make([]Occurrence, len(fs))
	for p, i := range firsts {
		out[p] = fs[i]
		out[p].SeenIn, occs = occs[:0:seen[p]], occs[seen[p]:]
	}
	for i := range fs {
		f := &fs[i]
		occ := Occurrence{Scenario: f.Scenario, Replay: f.Replay}
		g := &out[problem[i]]
		if !slices.ContainsFunc(g.SeenIn, func(o Occurrence) bool { return o.Scenario == occ.Scenario }) {
			g.SeenIn = append(g.SeenIn, occ)
		}
	}
	return out
}
