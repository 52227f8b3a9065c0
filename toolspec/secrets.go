package toolspec

import "encoding/json"

// Secrets returns the values of the redacted arguments of a call (Redact),
// decoded from its JSON arguments, for runtime.Call.Redact: they are never
// recorded, only blanked wherever else they show up in the report (the
// tool's result or error text, the agent's error, findings). Nil when the
// tool redacts nothing.
func (e *Tool) Secrets(raw json.RawMessage) []any {
	if len(e.spec.redact) == 0 || len(raw) == 0 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []any
	for _, k := range e.spec.redact {
		if v, ok := m[k]; ok {
			out = append(out, v)
		}
	}
	return out
}
