package runtime

import (
	"strconv"
	"strings"
)

// declaredUnchecked returns the report's note when, in a suite without
// State, repeats were absorbed (or taken as updates) on an op's idempotent
// declaration alone (JudgedByDeclaration): //agentidem:write ... idempotent,
// toolspec.Idempotent(), or an MCP tool's idempotentHint. The README
// documents that without State the declaration is trusted, and the verdict
// keeps trusting it; but nothing checked it, and a wrong one passed SAFE
// with nothing said but "1 repeat absorbed (declared idempotent)": an
// appending add_note whose server set idempotentHint (red team rtL,
// TestNotesLyingHintNoState). The note says which ops, that their
// declaration went unchecked, and that State would check it (a repeat that
// changed the world is then not_idempotent). The suite calls it only
// without State: with State a repeat is left to the declaration only
// where the snapshots could not tell (the agent's own writes changed the
// world between the two calls, say), and the note's advice would be
// wrong there. It returns nil when no repeat rested on a declaration.
func declaredUnchecked(baseline *Result, results []*Result) []string {
	var (
		ops []string
		n   map[string]int
	)
	count := func(res *Result) {
		if res == nil || res.Trace == nil {
			return
		}
		for i := range res.Trace.Ops {
			o := &res.Trace.Ops[i]
			if o.JudgedBy != JudgedByDeclaration || (o.Repeat != RepeatAbsorbed && o.Repeat != RepeatUpdate) {
				continue
			}
			if n == nil {
				n = map[string]int{}
			}
			if n[o.Name] == 0 {
				ops = append(ops, o.Name)
			}
			n[o.Name]++
		}
	}
	count(baseline)
	for _, res := range results {
		count(res)
	}
	if len(ops) == 0 {
		return nil
	}
	total := 0
	for _, op := range ops {
		total += n[op]
	}
	var b strings.Builder
	b.WriteString("declared idempotent, not checked: ")
	b.WriteString(strconv.Itoa(total))
	if total == 1 {
		b.WriteString(" repeat passed on its op's idempotent declaration alone (")
	} else {
		b.WriteString(" repeats passed on their op's idempotent declaration alone (")
	}
	for i, op := range ops {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(op + " " + strconv.Itoa(n[op]))
	}
	b.WriteString("; declared by //agentidem:write ... idempotent, toolspec.Idempotent() or an MCP tool's idempotentHint); " +
		"without testkit.State the suite takes the declaration as given, so a wrong one (a write that appends, declared idempotent) passes here too: " +
		"give testkit.State a snapshot of the world and each repeat is judged by what it changed (one that changed it is not_idempotent)")
	return []string{b.String()}
}
