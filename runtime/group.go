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
	key := f.Code + "\x00" + strings.Join(f.Ops, ",") + "\x00" + strings.Join(f.Identities, ",")
	if f.Code == CodeIdentityUnstable {
		// Its identities are fresh per attempt: the op is the problem. A
		// warning (a retry the suite cannot tell from other work) and an
		// error (a retry, a delivery made again, under a fresh key) are
		// two: an error printed as "as in" a warning read as the warning.
		key = f.Code + "\x00" + strings.Join(f.Ops, ",") + "\x00" + string(f.Severity)
	}
	if f.Code == CodeInvariantFailed {
		if m := invariantName.FindStringSubmatch(f.Message); m != nil {
			key += "\x00" + m[1]
		}
	}
	if f.Code == CodeContextDetached {
		// A refused or unattributed call names its op; a tool given a
		// context not the agent's names its site, in its message.
		key += "\x00" + string(f.Severity)
		if len(f.Ops) == 0 {
			key += "\x00" + firstLine(f.Message)
		}
	}
	if f.Code == CodeAgentPanic || f.Code == CodeBaselineFailed {
		key += "\x00" + firstLine(f.Message)
	}
	if f.Code == CodeDuplicateWrite && strings.Contains(f.Message, resentMark) {
		// A request the client sent again inside one call (resent.go)
		// is another problem than the agent's repeat of the call, with
		// another fix (the client's retries, not the agent's): printed
		// as "as in" a crash's duplicate, its own message was never.
		key += "\x00inside"
	}
	return key
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
	out := []Finding{}
	at := map[string]int{}
	for _, f := range fs {
		k := f.GroupKey()
		occ := Occurrence{Scenario: f.Scenario, Replay: f.Replay}
		if i, ok := at[k]; ok {
			if !slices.ContainsFunc(out[i].SeenIn, func(o Occurrence) bool { return o.Scenario == occ.Scenario }) {
				out[i].SeenIn = append(out[i].SeenIn, occ)
			}
			continue
		}
		at[k] = len(out)
		f.SeenIn = []Occurrence{occ}
		out = append(out, f)
	}
	return out
}
