package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
)

// redeliveredKeyMessage is the message of the identity_unstable error on
// call b (tr.Ops[j]), made by a later delivery from the line where the
// first delivery made call a, under another identity. Where the agent
// made the new key (an id generated where the message is handled), that
// is what it says. Where the key is what a call of the delivery answered
// before b (a trial's id that start_trial's sink made afresh for the
// redelivery), the agent generated nothing: the message names that call,
// and says that the fix is there (red team rtT #8: "a key made afresh
// for each delivery ... derive the key from the message", for an id the
// sink had answered).
func redeliveredKeyMessage(tr *Trace, a, b *Operation, j int) string {
	first := "the first delivery's"  // a's
	if a.Invocation > b.Invocation { // two at once: b's is the first
		first = "the other delivery's"
	}
	if src := answeredKey(tr, a, b, j); src != nil {
		dup := ""
		if src.Repeat == RepeatDuplicate {
			dup = ", a repeat with an effect of its own (its duplicate_write is reported)"
		}
		return fmt.Sprintf("delivered again, the agent called %s from the same call site (%s) with identity %s, where %s %s had identity %s, sending some of the same arguments: the new identity is what %s answered%s, a new one made by its sink for the redelivery, not a key the agent made; make %s give the same answer for the same message (key it by the message at the sink), and %s's identity follows",
			b.Name, shortSite(b.Site), b.Identity, first, a.ID, a.Identity, src.ID, dup, src.Name, b.Name)
	}
	return fmt.Sprintf("delivered again, the agent called %s from the same call site (%s) with identity %s, where %s %s had identity %s, sending some of the same arguments: a key made afresh for each delivery (an id generated where the message is handled) lets the sink run the redelivery as new work; derive the key from the message (its id, the order, the session)",
		b.Name, shortSite(b.Site), b.Identity, first, a.ID, a.Identity)
}

// answeredKey returns the call of b's delivery made before b (tr.Ops[j])
// whose answer holds every part of b's identity that a's does not hold,
// as itself or inside a key made of it (holdsAnswered); nil if none does.
func answeredKey(tr *Trace, a, b *Operation, j int) *Operation {
	fresh := identityLeaves(b.Identity)
	for t := range identityLeaves(a.Identity) {
		delete(fresh, t)
	}
	if len(fresh) == 0 {
		return nil
	}
	for k := j - 1; k >= 0; k-- {
		o := &tr.Ops[k]
		if o.Invocation != b.Invocation || o.Result == nil {
			continue
		}
		enc, err := json.Marshal(o.Result)
		if err != nil {
			continue
		}
		got := identityLeaves(string(enc))
		all := true
		for t := range fresh {
			all = all && (got[t] || holdsAnswered(t, got, a.Identity))
		}
		if all {
			return o
		}
	}
	return nil
}

// holdsAnswered reports whether leaf t of an identity (a JSON string) is a
// key made of a string an answer holds (a leaf of got, two characters or
// more), which the earlier delivery's identity (prev) does not hold: a
// comment keyed "comment:T-2" by the ticket create_ticket answered. The
// create's duplicate answered T-2, and the message said the agent made a
// key afresh for each delivery, which it had not (red team rS #6).
func holdsAnswered(t string, got map[string]bool, prev string) bool {
	in, ok := strings.CutPrefix(t, `"`)
	if !ok {
		return false
	}
	for g := range got {
		s, ok := strings.CutPrefix(g, `"`)
		if !ok {
			continue
		}
		s = strings.TrimSuffix(s, `"`)
		if len(s) >= 2 && strings.Contains(in, s) && !strings.Contains(prev, s) {
			return true
		}
	}
	return false
}
