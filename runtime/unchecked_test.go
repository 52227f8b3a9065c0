package runtime

import (
	"strings"
	"testing"
)

// uncheckedNote returns the report's note on declarations taken unchecked.
func uncheckedNote(rep *Report) string {
	for _, n := range rep.Notes {
		if strings.HasPrefix(n, "declared idempotent, not checked: ") {
			return n
		}
	}
	return ""
}

// TestAnUncheckedDeclarationIsNoted: without State an op declared
// idempotent has its repeats absorbed on the declaration alone, and the
// verdict trusts it, as the README says; a wrong declaration (add_todo
// appends) then passes SAFE, which red team rtL saw with nothing said but
// "1 repeat absorbed (declared idempotent)". The report now says which
// ops went unchecked and that State checks them. With State the wrong
// declaration is still not_idempotent and there is no such note; ops
// that declare nothing get none either (their repeats are counted).
func TestAnUncheckedDeclarationIsNoted(t *testing.T) {
	lying := &todoAgent{add: addOp(true), set: setOp(true)}
	rep := runTodo(t, lying)
	if !rep.Safe {
		t.Fatalf("without State the declaration is trusted and the verdict SAFE (the README's trust): %v", findings(rep, ""))
	}
	note := uncheckedNote(rep)
	for _, want := range []string{"repeats passed on their op's idempotent declaration alone (add_todo ", "without testkit.State", "not_idempotent"} {
		if !strings.Contains(note, want) {
			t.Fatalf("the note %q lacks %q; notes: %q", note, want, rep.Notes)
		}
	}

	// Declared truthfully, the declaration is still unchecked: the same note.
	truthful := runTodo(t, &todoAgent{add: addOp(false), set: setOp(true)})
	if note := uncheckedNote(truthful); !strings.Contains(note, "update_todo") || strings.Contains(note, "add_todo") {
		t.Fatalf("truthful declaration of update_todo, no State: note %q", note)
	}

	// With State the wrong declaration is caught, and nothing is unchecked.
	withState := runTodo(t, lying, State(func() any { return lying.list.snapshot() }))
	if got := findings(withState, "crash_restart/add_todo#1"); len(got) != 1 || got[0] != "not_idempotent add_todo" {
		t.Fatalf("with State crash_restart/add_todo#1: %v", got)
	}
	if note := uncheckedNote(withState); note != "" {
		t.Fatalf("with State the note must not say State would check it: %q", note)
	}

	// Nothing declared: nothing rests on a declaration.
	plain := runTodo(t, &todoAgent{add: addOp(false), set: setOp(false)})
	if note := uncheckedNote(plain); note != "" {
		t.Fatalf("no declaration, yet a note: %q", note)
	}
}
