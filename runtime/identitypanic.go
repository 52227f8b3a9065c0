package runtime

import (
	"fmt"
	"strings"
)

// CodeIdentityPanicked (error): evaluating a call's identity or entity
// expression panicked (identity=o.ID with a nil o). The tool ran as it
// would in production, but the call's identity is unknown, so no duplicate
// of it can be found.
const CodeIdentityPanicked = "identity_panicked"

// EvalIdentity evaluates the identity or entity expressions of a call for a
// generated wrapper: f returns their values. A panic in f is recovered and
// returned, with no values, so that the wrapper still calls the tool and the
// program behaves as it does without agentidem; the wrapper then hands the
// panic to Call.IdentityPanicked.
//
// EvalIdentity is called only by generated code, and only when Enabled is
// true.
func EvalIdentity(f func() []any) (vals []any, panicked any) {
	defer func() {
		if v := recover(); v != nil {
			vals, panicked = nil, v
		}
	}()
	return f(), nil
}

// IdentityPanicked records that the directive expression expr (as written,
// e.g. "identity=o.ID") panicked with v when the call began: the call's
// identity (or entity) is recorded as unknown, and the suite reports
// identity_panicked. A nil v does nothing.
func (c *Call) IdentityPanicked(expr string, v any) {
	if v == nil || c.inv == nil {
		return
	}
	msg := fmt.Sprintf("%s panicked: %v", expr, v)
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.rare()
	x.identityPanic = append(x.identityPanic, msg)
	if len(expr) >= len("entity=") && expr[:len("entity=")] == "entity=" {
		c.rec.Entity = ""
		return
	}
	if c.rec.Entity == c.rec.Identity {
		c.rec.Entity = "" // the default entity of a write is its identity
	}
	c.rec.Identity = ""
	if x.identityError == "" {
		x.identityError = msg
	}
}

// identityPanicked reports each op whose identity or entity expression
// panicked, once per suite for each op and expression.
func (s *Suite) identityPanicked(tr *Trace, add func(Finding)) {
	for i := range tr.Ops {
		o := &tr.Ops[i]
		for _, msg := range o.IdentityPanic {
			key := "identity_panicked\x00" + o.Name + "\x00" + msg
			if s.seenOnce[key] {
				continue
			}
			if s.seenOnce == nil {
				s.seenOnce = map[string]bool{}
			}
			s.seenOnce[key] = true
			add(Finding{Code: CodeIdentityPanicked, Severity: SeverityError, Ops: []string{o.Name}, Calls: []string{o.ID},
				Message: fmt.Sprintf("%s: %s (call %s); the tool ran as in production, but the call's identity is unknown, so a duplicate of it cannot be found; make the expression safe for every argument the agent passes (check for nil, or use a method that does)",
					o.Name, msg, o.ID)})
		}
	}
}

// identityMissingText ends the IdentityError of a call whose identity
// arguments were missing (IdentityMissing).
const identityMissingText = " missing from the call's arguments"

// IdentityMissing records that the arguments named, from which the call's
// identity is taken, were missing from it (or null): a framework tool
// whose identity is an optional argument the model left out. The identity
// is recorded as unknown rather than as null, so that two such calls with
// other arguments are not taken for one write done twice, and the suite
// reports identity_missing. No names does nothing. Framework adapters call
// it (toolspec.Tool.ValuesOf says which are missing).
func (c *Call) IdentityMissing(names ...string) {
	if len(names) == 0 || c.inv == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rec.Entity == c.rec.Identity {
		c.rec.Entity = "" // the default entity of a write is its identity
	}
	c.rec.Identity = ""
	c.rare().identityError = "identity argument " + strings.Join(names, ", ") + identityMissingText
}
