package toolspec

import "encoding/json"

// Secrets returns the values of the redacted arguments of a call (Redact),
// decoded from its JSON arguments, for runtime.Call.Redact: they are never
// recorded, only blanked wherever else they show up in the report (the
// tool's result or error text, the agent's error, findings). Nil when the
// tool redacts nothing.
//
// A number is the json.Number of its literal, as the model wrote it, not
// a float64: an account number of 2^53 or more (12345678901234567891) as
// a float64 would be searched for as 12345678901234567000, which is not
// the text a tool echoes, and leak. The runtime searches for a number
// under each text it may take (Call.Redact).
func (e *Tool) Secrets(raw json.RawMessage) []any {
	if len(e.spec.redact) == 0 || len(raw) == 0 {
		return nil
	}
	var v any
	if decodeLiteral(raw, &v) != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	var out []any
	for _, k := range e.spec.redact {
		if v, ok := m[k]; ok {
			out = append(out, v)
		}
	}
	return out
}
