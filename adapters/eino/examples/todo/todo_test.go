package todo_test

import (
	"context"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	agentidemeino "github.com/agentidem/agentidem-go/adapters/eino"
	"github.com/agentidem/agentidem-go/adapters/eino/examples/todo"
	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

type world struct{ list atomic.Pointer[todo.List] }

func (w *world) agent(tools agentidemeino.Tools) func(context.Context) error {
	return func(ctx context.Context) error { return todo.Run(ctx, w.list.Load(), tools) }
}

func (w *world) options(state bool) []testkit.Option {
	opts := []testkit.Option{testkit.NoSummary(), testkit.Setup(func(context.Context) error {
		w.list.Store(todo.NewList("write report"))
		return nil
	})}
	if state {
		opts = append(opts, testkit.State(func() any { return w.list.Load().Snapshot() }))
	}
	return opts
}

func run(t *testing.T, tools agentidemeino.Tools, state bool) *runtime.Report {
	t.Helper()
	w := &world{}
	rep := testkit.Run(t, w.agent(tools), w.options(state)...)
	if !rep.BaselineSucceeded {
		t.Fatalf("baseline failed: %s", rep.BaselineFailure)
	}
	// Absorbed repeats, state changes and problems are in the schema.
	if err := reportschema.Validate(rep); err != nil {
		t.Fatalf("report does not match the schema: %v", err)
	}
	return rep
}

// tally counts duplicates per scenario and op: add_todo's are real (it
// appends), update_todo's false (it sets).
func tally(rep *runtime.Report) (falseAlarms, real int, where []string) {
	for _, r := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		for _, d := range r.Duplicates {
			if d.Op == "add_todo" {
				real++
			} else {
				falseAlarms++
				where = append(where, r.Scenario+" "+d.Op)
			}
		}
		for _, f := range r.Findings {
			if f.Code == runtime.CodeNotIdempotent {
				falseAlarms++
				where = append(where, r.Scenario+" not_idempotent "+f.Ops[0])
			}
		}
	}
	sort.Strings(where)
	return falseAlarms, real, where
}

func duplicated(rep *runtime.Report, scenario, op string) bool {
	for _, r := range rep.Results {
		for _, d := range r.Duplicates {
			if r.Scenario == scenario && d.Op == op {
				return true
			}
		}
	}
	return false
}

// TestFalseAlarmsBeforeAndAfter is the measurement of the closing note.
func TestFalseAlarmsBeforeAndAfter(t *testing.T) {
	before := run(t, todo.Undeclared, false)
	fBefore, rBefore, where := tally(before)
	if fBefore == 0 {
		t.Fatal("without a declaration or State, update_todo's repeats are counted; the measurement has nothing to measure")
	}
	t.Logf("before: %d false duplicates (%s), %d real", fBefore, strings.Join(where, "; "), rBefore)

	declared := run(t, todo.Declared, false)
	fDecl, rDecl, where := tally(declared)
	if fDecl != 0 {
		t.Errorf("update_todo declared idempotent: %d false duplicates: %s", fDecl, strings.Join(where, "; "))
	}
	state := run(t, todo.Undeclared, true)
	fState, rState, where := tally(state)
	if fState != 0 {
		t.Errorf("with State: %d false duplicates: %s", fState, strings.Join(where, "; "))
	}
	t.Logf("after: idempotent %d false, %d real; State %d false, %d real", fDecl, rDecl, fState, rState)
	for name, rep := range map[string]*runtime.Report{"before": before, "declared": declared, "state": state} {
		if rep.Safe || !duplicated(rep, "crash_restart/add_todo#1", "add_todo") {
			t.Errorf("%s: add_todo appended twice under crash_restart is not reported", name)
		}
	}
	if rDecl != rBefore || rState != rBefore {
		t.Errorf("real duplicates: before %d, declared %d, State %d: want the same", rBefore, rDecl, rState)
	}
}

func TestAddTodoTwiceSaysWhatChanged(t *testing.T) {
	rep := run(t, todo.Declared, true)
	var msg string
	for _, f := range rep.Findings {
		if f.Scenario == "crash_restart/add_todo#1" && f.Code == runtime.CodeDuplicateWrite {
			msg = f.Message
		}
	}
	want := `todos: 2 → 3 entries, added {"content":"buy milk","done":false,"id":3}`
	if !strings.Contains(msg, want) {
		t.Fatalf("message %q lacks %q", msg, want)
	}
}

func TestWrongDeclarationIsCaughtWithState(t *testing.T) {
	wrong := agentidemeino.Tools{
		"add_todo":    agentidemeino.Write(agentidemeino.Identity("content"), agentidemeino.Idempotent()),
		"update_todo": agentidemeino.Write(agentidemeino.Identity("id"), agentidemeino.Idempotent()),
		"list_todo":   agentidemeino.Read(),
	}
	if rep := run(t, wrong, false); !rep.Safe {
		t.Fatal("without State the declaration is trusted")
	}
	rep := run(t, wrong, true)
	found := false
	for _, f := range rep.Findings {
		if f.Code == runtime.CodeNotIdempotent && f.Ops[0] == "add_todo" && f.Scenario == "crash_restart/add_todo#1" {
			found = true
		}
	}
	if !found || rep.Safe {
		t.Fatalf("add_todo declared idempotent, with State: want not_idempotent; findings %v", rep.Findings)
	}
}
