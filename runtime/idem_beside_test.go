package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// commentAgent posts a comment on ticket T-1 through add_comment, whose
// tracker drops a comment identical to one the ticket holds: declared
// idempotent (or so hinted by an MCP server), identified by the ticket
// alone. Retried on an error, the buggy agent puts the attempt in the
// text, and its retry posts a second comment beside the first (red team
// rtL R5, adapters/mcp/rtl/idemargs: SAFE 10/10 with State, as an update).
func commentAgent(w *kvWorld, idempotent, attemptInText bool) func(context.Context) error {
	add := &Op{Name: "add_comment", Kind: KindWrite, Params: []string{"ticket_id", "text"}, Idempotent: idempotent}
	return func(ctx context.Context) error {
		var err error
		for attempt := 1; attempt <= 2; attempt++ {
			text := "refund issued"
			if attemptInText {
				text = fmt.Sprintf("refund issued (attempt %d)", attempt)
			}
			err = traced(ctx, add, []any{"T-1", text}, []any{"T-1"}, func(context.Context) error {
				return w.do(func(m map[string]any) {
					l, _ := m["comments"].([]any)
					if c := "T-1: " + text; !slices.Contains(l, any(c)) {
						m["comments"] = append(l, c)
					}
				})
			})
			if err == nil || ctx.Err() != nil {
				return err
			}
		}
		return err
	}
}

func TestARewordedRetryOfAnIdempotentCommentIsADuplicate(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		idempotent, attemptInText bool
		want                      []string
	}{
		// The retry adds a second comment: a duplicate, with the
		// declaration as without it.
		{"reworded, declared", true, true, []string{ScenarioLostAck + "/add_comment#1"}},
		{"reworded", false, true, []string{ScenarioLostAck + "/add_comment#1"}},
		// The retry says the same: the tracker drops it.
		{"same text, declared", true, false, nil},
		{"same text", false, false, nil},
	} {
		w := &kvWorld{}
		rep := runOn(t, w, nil, commentAgent(w, tc.idempotent, tc.attemptInText))
		if got := dupScenarios(rep); !slices.Equal(got, tc.want) {
			t.Errorf("%s: duplicate_write in %v, want %v; findings %v", tc.name, got, tc.want, findings(rep, ""))
		}
		if tc.idempotent && tc.attemptInText {
			for _, f := range rep.Findings {
				if f.Code == CodeDuplicateWrite && !strings.Contains(f.Message, "restating none of it") {
					t.Errorf("%s: the message does not say why the declaration did not cover the repeat: %s", tc.name, f.Message)
				}
			}
		}
		if got := findings(rep, ScenarioBaseline); len(got) != 0 {
			t.Errorf("%s: baseline findings %v", tc.name, got)
		}
	}
}

// Honest idempotent shapes whose repeats with other arguments add beside
// what the first call made: none is a duplicate.
func TestIdempotentWritesThatAddBesideWithOtherArgumentsAreUpdates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps func(w *kvWorld) []step
	}{
		{
			// set_tags sets a ticket's tags as a whole: [a], then [a, b]
			// adds b beside a, and restates a.
			"set_tags", func(w *kvWorld) []step {
				op := &Op{Name: "set_tags", Kind: KindWrite, Params: []string{"ticket_id", "tags"}, Idempotent: true}
				set := func(tags ...any) step {
					return step{op, []any{"T-1", tags}, []any{"T-1"}, func(m map[string]any) {
						m["tags"] = map[string]any{"T-1": tags}
					}}
				}
				return []step{set("a"), set("a", "b")}
			},
		},
		{
			// add_tag adds a tag unless the ticket has it: two tags in
			// one delivery, each added beside the other.
			"add_tag if absent", func(w *kvWorld) []step {
				op := &Op{Name: "add_tag", Kind: KindWrite, Params: []string{"ticket_id", "tag"}, Idempotent: true}
				add := func(tag string) step {
					return step{op, []any{"T-1", tag}, []any{"T-1"}, func(m map[string]any) {
						l, _ := m["tags"].([]any)
						if !slices.Contains(l, any(tag)) {
							m["tags"] = append(l, tag)
						}
					}}
				}
				return []step{add("refund"), add("urgent")}
			},
		},
		{
			// upsert by key: the second call changes a field of the
			// customer the first made, and adds one.
			"upsert by key", func(w *kvWorld) []step {
				op := &Op{Name: "upsert_customer", Kind: KindWrite, Params: []string{"id", "fields"}, Idempotent: true}
				up := func(fields map[string]any) step {
					return step{op, []any{"c1", fields}, []any{"c1"}, func(m map[string]any) {
						cs, _ := m["customers"].(map[string]any)
						if cs == nil {
							cs = map[string]any{}
						}
						c, _ := cs["c1"].(map[string]any)
						if c == nil {
							c = map[string]any{}
						}
						for k, v := range fields {
							c[k] = v
						}
						cs["c1"] = c
						m["customers"] = cs
					}}
				}
				return []step{up(map[string]any{"name": "Ann", "tier": "gold"}), up(map[string]any{"name": "Ann", "tier": "platinum", "email": "ann@example.com"})}
			},
		},
		{
			// add_members adds to a group's set (a map of true): [alice],
			// then [alice, bob].
			"set membership", func(w *kvWorld) []step {
				op := &Op{Name: "add_members", Kind: KindWrite, Params: []string{"group", "members"}, Idempotent: true}
				add := func(names ...string) step {
					return step{op, []any{"g1", names}, []any{"g1"}, func(m map[string]any) {
						gs, _ := m["groups"].(map[string]any)
						if gs == nil {
							gs = map[string]any{}
						}
						g, _ := gs["g1"].(map[string]any)
						if g == nil {
							g = map[string]any{}
						}
						for _, n := range names {
							g[n] = true
						}
						gs["g1"] = g
						m["groups"] = gs
					}}
				}
				return []step{add("alice"), add("alice", "bob")}
			},
		},
	} {
		rep := runKV(t, nil, tc.steps)
		for _, f := range rep.Findings {
			if f.Code == CodeDuplicateWrite || f.Code == CodeNotIdempotent {
				t.Errorf("%s: %s in %s: %s", tc.name, f.Code, f.Scenario, f.Message)
			}
		}
		if rep.Baseline == nil || rep.Baseline.Trace == nil || !slices.ContainsFunc(rep.Baseline.Trace.Ops, func(o Operation) bool { return o.Repeat == RepeatUpdate }) {
			t.Errorf("%s: the baseline's second call was not judged an update", tc.name)
		}
	}
}

// addedBeside by itself, where the run ended with more than one delivery
// leaves: only what the end cannot make alike is told apart by the
// arguments.
func TestAddedBesideTellsASecondEntryFromARestatedSet(t *testing.T) {
	win := func(id string, args []any, before, after string) Operation {
		ev := effectView{seen: true, before: before, after: after}
		return Operation{ID: id, Name: "w", Kind: KindWrite, Status: StatusSuccess, Identity: `"T-1"`, Idempotent: true,
			StateChange: DescribeChange(before, after), more: judgedMore(&ev),
			Args: Args{Names: []string{"ticket_id", "v"}, Values: args}}
	}
	no := func() bool { return false }
	for _, tc := range []struct {
		name          string
		first, repeat Operation
		end, baseEnd  string
		want          bool
		undecided     bool
	}{
		{"second comment",
			win("1:w#1", []any{"T-1", "attempt 1"}, `{}`, `{"c":["attempt 1"]}`),
			win("1:w#2", []any{"T-1", "attempt 2"}, `{"c":["attempt 1"]}`, `{"c":["attempt 1","attempt 2"]}`),
			`{"c":["attempt 1","attempt 2"]}`, `{"c":["attempt 1"]}`, true, false},
		{"second comment as a row",
			win("1:w#1", []any{"T-1", "attempt 1"}, `{}`, `{"c":[{"id":1,"text":"attempt 1","ticket":"T-1"}]}`),
			win("1:w#2", []any{"T-1", "attempt 2"}, `{"c":[{"id":1,"text":"attempt 1","ticket":"T-1"}]}`, `{"c":[{"id":1,"text":"attempt 1","ticket":"T-1"},{"id":2,"text":"attempt 2","ticket":"T-1"}]}`),
			`{"c":[{"id":1,"text":"attempt 1","ticket":"T-1"},{"id":2,"text":"attempt 2","ticket":"T-1"}]}`, `{"c":[{"id":1,"text":"attempt 1","ticket":"T-1"}]}`, true, false},
		{"set restated",
			win("1:w#1", []any{"T-1", []any{"a"}}, `{}`, `{"tags":{"T-1":["a"]}}`),
			win("1:w#2", []any{"T-1", []any{"a", "b"}}, `{"tags":{"T-1":["a"]}}`, `{"tags":{"T-1":["a","b"]}}`),
			`{"tags":{"T-1":["a","b"]}}`, `{"tags":{"T-1":["a"]}}`, false, false},
		{"set of true restated",
			win("1:w#1", []any{"T-1", []any{"alice"}}, `{"g":{"T-1":{"carol":true}}}`, `{"g":{"T-1":{"alice":true,"carol":true}}}`),
			win("1:w#2", []any{"T-1", []any{"alice", "bob"}}, `{"g":{"T-1":{"alice":true,"carol":true}}}`, `{"g":{"T-1":{"alice":true,"bob":true,"carol":true}}}`),
			`{"g":{"T-1":{"alice":true,"bob":true,"carol":true}}}`, `{"g":{"T-1":{"alice":true,"carol":true}}}`, false, false},
		{"a second entry in a map of true",
			win("1:w#1", []any{"T-1", "alice"}, `{"g":{"T-1":{"carol":true}}}`, `{"g":{"T-1":{"alice":true,"carol":true}}}`),
			win("1:w#2", []any{"T-1", "bob"}, `{"g":{"T-1":{"alice":true,"carol":true}}}`, `{"g":{"T-1":{"alice":true,"bob":true,"carol":true}}}`),
			`{"g":{"T-1":{"alice":true,"bob":true,"carol":true}}}`, `{"g":{"T-1":{"alice":true,"carol":true}}}`, true, false},
		{"a field added to what the first made",
			win("1:w#1", []any{"T-1", "Ann"}, `{}`, `{"u":{"T-1":{"name":"Ann"}}}`),
			win("1:w#2", []any{"T-1", "ann@example.com"}, `{"u":{"T-1":{"name":"Ann"}}}`, `{"u":{"T-1":{"email":"ann@example.com","name":"Ann"}}}`),
			`{"u":{"T-1":{"email":"ann@example.com","name":"Ann"}}}`, `{"u":{"T-1":{"name":"Ann"}}}`, false, false},
		{"a field changed in place",
			win("1:w#1", []any{"T-1", "gold"}, `{}`, `{"u":{"T-1":{"tier":"gold"}}}`),
			win("1:w#2", []any{"T-1", "platinum"}, `{"u":{"T-1":{"tier":"gold"}}}`, `{"u":{"T-1":{"tier":"platinum"}}}`),
			`{"u":{"T-1":{"tier":"platinum"}}}`, `{"u":{"T-1":{"tier":"gold"}}}`, false, false},
		{"no more at the end than one delivery leaves",
			win("1:w#1", []any{"T-1", "refund"}, `{}`, `{"c":["refund"]}`),
			win("1:w#2", []any{"T-1", "urgent"}, `{"c":["refund"]}`, `{"c":["refund","urgent"]}`),
			`{"c":["refund","urgent"],"x":1}`, `{"c":["refund","urgent"]}`, false, false},
		{"no end to compare with",
			win("1:w#1", []any{"T-1", "attempt 1"}, `{}`, `{"c":["attempt 1"]}`),
			win("1:w#2", []any{"T-1", "attempt 2"}, `{"c":["attempt 1"]}`, `{"c":["attempt 1","attempt 2"]}`),
			`{"c":["attempt 1","attempt 2"]}`, ``, false, true},
	} {
		var views stateViews
		got, undecided := addedBeside(&tc.first, &tc.repeat, tc.end, tc.baseEnd, no, &views)
		if got != tc.want || (undecided != "") != tc.undecided {
			t.Errorf("%s: addedBeside = %v, %q; want %v, undecided %v", tc.name, got, undecided, tc.want, tc.undecided)
		}
	}
}
