package runtime

import (
	"strings"
	"testing"
)

// oldGroupKey is GroupKey as it was written before it appended to one
// buffer (group.go): the keys must stay the same bytes.
func oldGroupKey(f Finding) string {
	key := f.Code + "\x00" + strings.Join(f.Ops, ",") + "\x00" + strings.Join(f.Identities, ",")
	if f.Code == CodeIdentityUnstable {
		key = f.Code + "\x00" + strings.Join(f.Ops, ",") + "\x00" + string(f.Severity)
	}
	if f.Code == CodeInvariantFailed {
		if m := invariantName.FindStringSubmatch(f.Message); m != nil {
			key += "\x00" + m[1]
		}
	}
	if f.Code == CodeContextDetached {
		key += "\x00" + string(f.Severity)
		if len(f.Ops) == 0 {
			key += "\x00" + firstLine(f.Message)
		}
	}
	if f.Code == CodeAgentPanic || f.Code == CodeBaselineFailed {
		key += "\x00" + firstLine(f.Message)
	}
	if f.Code == CodeDuplicateWrite && strings.Contains(f.Message, resentMark) {
		key += "\x00inside"
	}
	return key
}

func TestGroupKeyAsBefore(t *testing.T) {
	msgs := []string{
		"", "j", resentMark, "x" + resentMark, resentMark[:len(resentMark)-1],
		"jjj inside the call after the injected lost respons", "p-1's HTTP client sent POST /pay once more " + resentMark + " (the first)",
		strings.Repeat("inside the call after the in", 3) + "jected lost response",
		"inside the call after the injected lost responsE", "invariant \"stock\" failed: x\ny", "line one\nline two",
		strings.Repeat("ij", 40) + resentMark[1:],
	}
	codes := []string{CodeDuplicateWrite, CodeIdentityUnstable, CodeInvariantFailed, CodeContextDetached, CodeAgentPanic, CodeBaselineFailed, CodeNotIdempotent}
	opss := [][]string{nil, {"a"}, {"a", "b"}}
	for _, c := range codes {
		for _, m := range msgs {
			for _, ops := range opss {
				for _, sev := range []Severity{SeverityError, SeverityWarning} {
					f := Finding{Code: c, Message: m, Ops: ops, Identities: ops, Severity: sev}
					if got, want := f.GroupKey(), oldGroupKey(f); got != want {
						t.Errorf("%s %q %v: key %q, want %q", c, m, ops, got, want)
					}
				}
			}
		}
	}
	for _, m := range msgs {
		if got, want := holdsResentMark(m), strings.Contains(m, resentMark); got != want {
			t.Errorf("holdsResentMark(%q) = %v, want %v", m, got, want)
		}
	}
}
