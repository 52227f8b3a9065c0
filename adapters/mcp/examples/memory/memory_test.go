package memory_test

import (
	"context"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/examples/memory"
	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// world is one memory server and the graph of the current scenario.
type world struct {
	g     atomic.Pointer[memory.Graph]
	agent *memory.Agent
}

func newWorld(ann memory.Annotations, tools agentidemmcp.Tools, keyed bool) *world {
	w := &world{}
	w.g.Store(memory.NewGraph())
	srv := memory.NewServer(w.g.Load, ann, tools)
	w.agent = &memory.Agent{Server: srv, Session: "s-1", Keyed: keyed}
	return w
}

func (w *world) options(state bool) []testkit.Option {
	opts := []testkit.Option{testkit.Setup(func(context.Context) error { w.g.Store(memory.NewGraph()); return nil })}
	if state {
		opts = append(opts, testkit.State(func() any { return w.g.Load().Snapshot() }))
	}
	return opts
}

// tally counts the duplicates a report found, per scenario and op: on
// append_journal they are real (it appends), on every other tool false
// (they skip what exists).
func tally(rep *runtime.Report) (falseAlarms, real int, where []string) {
	for _, r := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		for _, d := range r.Duplicates {
			if d.Op == "append_journal" {
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

func run(t *testing.T, w *world, state bool) *runtime.Report {
	t.Helper()
	rep := testkit.Run(t, w.agent.Run, append(w.options(state), testkit.NoSummary())...)
	if !rep.BaselineSucceeded {
		t.Fatalf("baseline failed: %s", rep.BaselineFailure)
	}
	// Absorbed repeats, state changes and problems are in the schema.
	if err := reportschema.Validate(rep); err != nil {
		t.Fatalf("report does not match the schema: %v", err)
	}
	return rep
}

// TestFalseAlarmsBeforeAndAfter is the measurement of the closing note:
// the naive agent (its journal line unkeyed) under the fault suite, told
// about the tools three ways.
func TestFalseAlarmsBeforeAndAfter(t *testing.T) {
	// Before: no annotations, every tool listed as a write by its
	// arguments, no State. Every repeat of a create counts.
	before := run(t, newWorld(memory.NoAnnotations, memory.EveryTool, false), false)
	fBefore, rBefore, where := tally(before)
	if fBefore == 0 {
		t.Fatal("without annotations or State the creates' repeats are counted as duplicates; the measurement has nothing to measure")
	}
	t.Logf("before: %d false duplicates (%s), %d real", fBefore, strings.Join(where, "; "), rBefore)

	// The server's MCP annotations, read by the middleware; the user lists
	// append_journal only.
	ann := run(t, newWorld(memory.Honest, memory.JournalOnly, false), false)
	fAnn, rAnn, where := tally(ann)
	if fAnn != 0 {
		t.Errorf("with annotations: %d false duplicates: %s", fAnn, strings.Join(where, "; "))
	}
	// State, without annotations.
	st := run(t, newWorld(memory.NoAnnotations, memory.EveryTool, false), true)
	fState, rState, where := tally(st)
	if fState != 0 {
		t.Errorf("with State: %d false duplicates: %s", fState, strings.Join(where, "; "))
	}
	t.Logf("after: annotations %d false, %d real; State %d false, %d real", fAnn, rAnn, fState, rState)
	// The journal's real duplicate is caught every way.
	for name, rep := range map[string]*runtime.Report{"before": before, "annotations": ann, "state": st} {
		if rep.Safe || !duplicated(rep, "crash_restart/append_journal#1", "append_journal") {
			t.Errorf("%s: the journal line noted twice after a crash is not reported", name)
		}
	}
	if rAnn != rBefore || rState != rBefore {
		t.Errorf("real duplicates: before %d, annotations %d, State %d: want the same", rBefore, rAnn, rState)
	}
}

func TestTheRepeatsAreAbsorbedVisibly(t *testing.T) {
	rep := run(t, newWorld(memory.Honest, memory.JournalOnly, false), false)
	var res *runtime.Result
	for _, r := range rep.Results {
		if r.Scenario == "crash_restart/add_observations#1" {
			res = r
		}
	}
	if res == nil {
		t.Fatal("no crash_restart/add_observations#1: the annotated add_observations was not traced")
	}
	absorbed := map[string]string{}
	for _, o := range res.Trace.Ops {
		if o.Repeat == runtime.RepeatAbsorbed {
			absorbed[o.Name] = o.JudgedBy
		}
		if o.Name == "search_nodes" && o.Kind != runtime.KindRead {
			t.Errorf("search_nodes (readOnlyHint) traced as %s", o.Kind)
		}
	}
	for _, op := range []string{"create_entities", "create_relations", "add_observations"} {
		if absorbed[op] != runtime.JudgedByDeclaration {
			t.Errorf("%s's redelivered call: absorbed by %q, want by its declaration (idempotentHint)", op, absorbed[op])
		}
	}
}

func TestNaiveJournalIsCaughtWithWhatItChanged(t *testing.T) {
	rep := run(t, newWorld(memory.NoAnnotations, memory.EveryTool, false), true)
	var msg string
	for _, f := range rep.Findings {
		if f.Scenario == "crash_restart/append_journal#1" && f.Code == runtime.CodeDuplicateWrite {
			msg = f.Message
		}
	}
	if want := `journal: 1 → 2 entries, added "turn 1: learnt where alice works"`; !strings.Contains(msg, want) {
		t.Fatalf("message %q lacks %q", msg, want)
	}
}

func TestKeyedAgentPasses(t *testing.T) {
	w := newWorld(memory.Honest, memory.JournalOnly, true)
	rep := testkit.TestAgent(t, w.agent.Run, w.options(true)...)
	if !rep.Safe || rep.InconclusiveCount != 0 {
		t.Fatalf("keyed agent: safe=%v, %d inconclusive", rep.Safe, rep.InconclusiveCount)
	}
}

func TestWrongAnnotationIsCaughtWithState(t *testing.T) {
	// append_journal claims idempotentHint. Without State the claim is
	// trusted and the real duplicate hides...
	w := newWorld(memory.Wrong, memory.JournalOnly, false)
	if rep := run(t, w, false); !rep.Safe {
		t.Fatalf("without State the annotation is trusted: %v", tallyCodes(rep))
	}
	// ...with State the world shows the claim wrong.
	rep := run(t, w, true)
	if !has(rep, "crash_restart/append_journal#1", runtime.CodeNotIdempotent, "append_journal") || rep.Safe {
		t.Fatalf("a wrong idempotentHint with State: %v", tallyCodes(rep))
	}
}

// duplicated reports whether a scenario found op duplicated (before, the
// journal's duplicate may be folded into the first duplicate of the
// redelivery, a create's).
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

func has(rep *runtime.Report, scenario, code, op string) bool {
	for _, f := range rep.Findings {
		if f.Scenario == scenario && f.Code == code && len(f.Ops) > 0 && f.Ops[0] == op {
			return true
		}
	}
	return false
}

func tallyCodes(rep *runtime.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Scenario+" "+f.Code+" "+strings.Join(f.Ops, ","))
	}
	return out
}
