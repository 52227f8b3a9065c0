package runtime

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// CodeIdentityZero (warning): in the baseline, a write was called two or
// more times with other arguments, and its identity was the zero value
// ("", 0, false, null) in every call: identity=t.ID where the sink
// assigns the id, so the agent's t.ID is empty when it calls. Such an
// identity cannot tell one call from another, and two calls of other
// work were one write done twice: a correct agent that opened tickets for
// two orders failed its baseline with "create_ticket executed 2 times for
// identity """, and the message never said why (red team rtV #16).
//
// The suite then tells the op's calls apart by their arguments, for the
// whole suite: a call whose identity is that zero value gets, as its
// identity, the zero value with all its arguments. Calls with other
// arguments are other work; calls with the same arguments have the same
// identity under any identity= taken from the arguments, so a repeat of
// one is still a duplicate, and its finding says what identity= held.
const CodeIdentityZero = "identity_zero"

// zeroIdentity is an op whose identity was the zero value in every call
// of the baseline (Suite.zeroIDs).
type zeroIdentity struct {
	id   string // the canonical zero value: "", 0, false, null
	expr string // "identity t.ID", or "the identity" when not known
}

// zeroIdentities learns, in the baseline, the writes whose identity is the
// zero value in every call while their arguments differ, reports each
// once, and in every trace (the baseline's too) gives their calls of
// that identity one made with their arguments, before duplicates are
// judged.
func (s *Suite) zeroIdentities(tr *Trace, sc Scenario, add func(Finding)) {
	if sc.Kind == ScenarioBaseline {
		s.zeroIDs = zeroIdentityOps(tr)
		for _, op := range slices.Sorted(maps.Keys(s.zeroIDs)) {
			z := s.zeroIDs[op]
			var calls []string
			for i := range tr.Ops {
				if o := &tr.Ops[i]; o.Name == op && o.Kind == KindWrite && o.IdentityError == "" && o.Identity == z.id {
					calls = append(calls, o.ID)
				}
			}
			add(Finding{Code: CodeIdentityZero, Severity: SeverityWarning, Ops: []string{op}, Identities: []string{z.id}, Calls: calls,
				Message: fmt.Sprintf("%s: %s was %s in every call (%s), and their arguments differ: a value the sink assigns cannot identify the call; use what the caller knows (an argument the agent sets, such as an order's id). Until then the suite tells the calls of %s apart by their arguments: a repeat with the same arguments is a duplicate, a call with other arguments is other work",
					op, z.expr, z.id, strings.Join(calls, ", "), op)})
		}
	}
	if len(s.zeroIDs) == 0 {
		return
	}
	for i := range tr.Ops {
		o := &tr.Ops[i]
		z, ok := s.zeroIDs[o.Name]
		if !ok || o.Kind != KindWrite || o.IdentityError != "" || o.Identity != z.id {
			continue
		}
		id := "[" + o.Identity + "," + argsKey(o) + "]"
		if o.Entity == o.Identity {
			o.Entity = id // the default entity of a write is its identity
		}
		o.Identity = id
	}
}

// zeroIdentityNote ends the message of each duplicate_write finding of an
// op told apart by its arguments (zeroIdentities): the identity it was
// found by is not the one identity= gave.
func (s *Suite) zeroIdentityNote(res *Result, from int) {
	if len(s.zeroIDs) == 0 {
		return
	}
	for i := from; i < len(res.Findings); i++ {
		f := &res.Findings[i]
		if f.Code != CodeDuplicateWrite || len(f.Ops) == 0 || f.Message == "" {
			continue
		}
		if z, ok := s.zeroIDs[f.Ops[0]]; ok {
			f.Message += fmt.Sprintf("; %s was %s in every call: a value the sink assigns cannot identify the call; use what the caller knows (an argument the agent sets, such as an order's id); these calls had the same arguments, so they are one write done again under any identity taken from them",
				z.expr, z.id)
		}
	}
}

// zeroIdentityOps returns the writes of tr called two or more times, with
// arguments that differ, whose identity is one zero value in every call.
func zeroIdentityOps(tr *Trace) map[string]zeroIdentity {
	type seen struct {
		id     string
		args   string
		differ bool
		n      int
		not    bool // a call with another identity, or none
	}
	zero := false
	for i := range tr.Ops {
		if o := &tr.Ops[i]; o.Kind == KindWrite && o.IdentityError == "" && zeroJSON(o.Identity) {
			zero = true
			break
		}
	}
	if !zero {
		return nil // most suites: nothing allocated
	}
	var by map[string]*seen
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.Kind != KindWrite {
			continue
		}
		if by == nil {
			by = map[string]*seen{}
		}
		x := by[o.Name]
		if x == nil {
			x = &seen{id: o.Identity}
			by[o.Name] = x
		}
		if x.not {
			continue
		}
		if o.IdentityError != "" || o.Identity != x.id || !zeroJSON(o.Identity) {
			x.not = true
			continue
		}
		a := argsKey(o)
		if x.n == 0 {
			x.args = a
		} else if a != x.args {
			x.differ = true
		}
		x.n++
	}
	var out map[string]zeroIdentity
	for op, x := range by {
		if x.not || x.n < 2 || !x.differ {
			continue
		}
		if out == nil {
			out = map[string]zeroIdentity{}
		}
		out[op] = zeroIdentity{id: x.id, expr: identityExpr(op)}
	}
	return out
}

// zeroJSON reports whether s, a canonical identity, is a zero value: "",
// 0, false, null, or a list or object of nothing else. A redacted
// identity (a digest) is none.
func zeroJSON(s string) bool {
	switch {
	case s == "":
		return false
	case s == `""` || s == "0" || s == "false" || s == "null":
		return true
	case s[0] != '[' && s[0] != '{' && s[0] != '-' && s[0] != '0':
		return false // a string, a number, true: no need to decode it
	}
	v, err := decodeState(s)
	if err != nil {
		return false
	}
	return zeroValue(v)
}

func zeroValue(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		return err == nil && f == 0
	case []any:
		for _, e := range v {
			if !zeroValue(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range v {
			if !zeroValue(e) {
				return false
			}
		}
		return true
	}
	return false
}

// identityExpr names the identity of op as its annotation wrote it
// ("identity t.ID"), from the declared op's Directive; "the identity"
// when no declared op of that name has one.
func identityExpr(op string) string {
	declared.mu.Lock()
	defer declared.mu.Unlock()
	for _, o := range declared.ops {
		if o.Name != op {
			continue
		}
		if e := directiveIdentity(o.Directive); e != "" {
			return "identity " + e
		}
	}
	return "the identity"
}

// directiveIdentity is the value of identity= in an annotation, without
// its quotes: "t.ID" of "//agentidem:write identity=t.ID name=x", "to,
// subject" of identity="to, subject"; "" when there is none.
func directiveIdentity(d string) string {
	_, rest, ok := strings.Cut(d, " identity=")
	if !ok {
		return ""
	}
	if strings.HasPrefix(rest, `"`) {
		if s, err := strconv.QuotedPrefix(rest); err == nil {
			if u, err := strconv.Unquote(s); err == nil {
				return u
			}
		}
		return ""
	}
	v, _, _ := strings.Cut(rest, " ")
	return v
}
