package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// graph is a knowledge graph: observations need their entity.
type graph struct {
	mu       sync.Mutex
	entities map[string][]string
}

var (
	opCreate  = &Op{Name: "create", Kind: KindWrite, Params: []string{"name"}}
	opObserve = &Op{Name: "observe", Kind: KindWrite, Params: []string{"name", "text"}, After: []string{"create"}}
)

func (g *graph) createTraced(ctx context.Context, name string) (aiErr error) {
	aiCall, aiCtx := Begin(ctx, opCreate, []any{name}, []any{name}, nil)
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	_ = aiCtx
	g.mu.Lock()
	if _, ok := g.entities[name]; !ok {
		g.entities[name] = []string{}
	}
	g.mu.Unlock()
	if aiLost := aiCall.Finish(nil); aiLost != nil {
		return aiLost
	}
	return
}

func (g *graph) observeTraced(ctx context.Context, name, text string) (aiErr error) {
	aiCall, aiCtx := Begin(ctx, opObserve, []any{name, text}, []any{name, text}, nil)
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	_ = aiCtx
	g.mu.Lock()
	obs, ok := g.entities[name]
	if ok {
		g.entities[name] = append(obs, text)
	} else {
		aiErr = fmt.Errorf("entity with name %s not found", name)
	}
	g.mu.Unlock()
	if aiLost := aiCall.Finish(aiErr); aiLost != nil {
		return aiLost
	}
	return
}

// TestOrderFindingSaysWhatTheDependentCallDid runs an agent that creates
// an entity and adds an observation to it in one parallel turn.
func TestOrderFindingSaysWhatTheDependentCallDid(t *testing.T) {
	var g *graph
	rep, err := Run(context.Background(), "graph", func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Add(2)
		go func() { defer wg.Done(); errs[0] = g.createTraced(ctx, "Alice") }()
		go func() { defer wg.Done(); errs[1] = g.observeTraced(ctx, "Alice", "likes tea") }()
		wg.Wait()
		if errs[0] != nil {
			return errs[0]
		}
		return errs[1]
	}, Setup(func(context.Context) error { g = &graph{entities: map[string][]string{}}; return nil }), Schedules(20))
	if err != nil {
		t.Fatal(err)
	}
	var found *Finding
	for i, f := range rep.Findings {
		if f.Code == CodeDependentCallsConcurrent {
			found = &rep.Findings[i]
			break
		}
	}
	if found == nil {
		t.Fatalf("no dependent_calls_concurrent finding in %v", rep.Findings)
	}
	t.Log(found.Message)
	if !strings.Contains(found.Message, "(s0 = create#1, s1 = observe#1)") || !strings.Contains(found.Message, "observe failed: entity with name Alice not found") {
		t.Errorf("the finding does not say what observe did, or which call is which:\n%s", found.Message)
	}
	schedules := 0
	for _, res := range rep.Results {
		if res.Kind != ScenarioInterleaving {
			continue
		}
		schedules++
		if res.Legend != "s0 = create#1, s1 = observe#1" {
			t.Errorf("%s: legend %q", res.Scenario, res.Legend)
		}
	}
	if schedules < 2 {
		t.Errorf("%d schedules ran", schedules)
	}
}

func TestLegendNamesRoundsAndDeliveries(t *testing.T) {
	call := func(name string, inv, occ int) *Call {
		return &Call{op: &Op{Name: name}, inv: &invocation{n: inv}, rec: callRecord{Occurrence: int32(occ)}}
	}
	s := &scheduler{rounds: [][]*Call{
		{call("a", 1, 1), call("b", 1, 1)},
		{call("a", 1, 2), call("a", 2, 1)},
	}}
	want := "round 1: s0 = a#1, s1 = b#1; round 2: s0 = a#2, s1 = 2:a#1"
	if got := s.legend(); got != want {
		t.Errorf("legend %q, want %q", got, want)
	}
	if got := (&scheduler{}).legend(); got != "" {
		t.Errorf("a serial run has legend %q", got)
	}
}

func TestExplorationSentence(t *testing.T) {
	for _, c := range []struct {
		ex   Exploration
		want string
	}{
		{Exploration{Rounds: 1, Space: 6, Unreduced: 6, Explored: 6, Exhaustive: true, Strategy: "exhaustive"},
			"Ran every order of the agent's parallel calls that may change the outcome: 6 orders (1 round of calls in flight together)."},
		// The reverse, no order of the space, ran besides: the count is
		// of the orders, and the schedules are told apart (rtk/shape).
		{Exploration{Rounds: 2, Space: 36, Unreduced: 400, Explored: 37, Exhaustive: true, Strategy: "exhaustive", beside: 1},
			"Ran every order of the agent's parallel calls that may change the outcome: 36 orders (2 rounds of calls in flight together), and the reverse of the listed order, which reverses calls that commute too (the agent sees their answers in the other order): 37 schedules in all. The other 364 of the 400 possible only swap calls on different entities, which commute, so they were not run, but for that reverse."},
		{Exploration{Rounds: 1, Space: 1, Unreduced: 6, Explored: 2, Exhaustive: true, Strategy: "exhaustive", beside: 1},
			"Ran every order of the agent's parallel calls that may change the outcome: 1 order (1 round of calls in flight together), and the reverse of the listed order, which reverses calls that commute too (the agent sees their answers in the other order): 2 schedules in all."},
		// Rounds after the first that change with the order: the orders
		// that ran, and the listed schedule's count.
		{Exploration{Rounds: 2, Space: 12, Unreduced: 12, Explored: 8, Exhaustive: true, Strategy: "exhaustive"},
			"Ran every order of the agent's parallel calls that may change the outcome: 8 orders (2 rounds of calls in flight together; the listed schedule's rounds have 12 orders, and the rounds after the first changed with the order of the calls before them)."},
		// Cut short: never "every order", and the count is what ran.
		{Exploration{Rounds: 1, Space: 90, Unreduced: 90, Explored: 14, Strategy: "exhaustive", Hazard: "schedule s0s1f0f1 could not be run as chosen"},
			"Scheduling stopped after 14 schedules: schedule s0s1f0f1 could not be run as chosen"},
		{Exploration{Rounds: 1, Space: 90, Unreduced: 90, Explored: 14, Strategy: "exhaustive"},
			"Ran 14 schedules of the 90 orders of the agent's parallel calls that may change the outcome (1 round of calls in flight together), and stopped: not every order."},
		{Exploration{Rounds: 1, Space: countCap, Unreduced: countCap, Explored: 3000, Strategy: "pct"},
			"Ran 3000 schedules of the " + bigCount(countCap) + " orders of the agent's parallel calls that may change the outcome (1 round of calls in flight together), sampled by PCT: not every order."},
		{Exploration{Rounds: 3, Space: 48, Unreduced: countCap, Explored: 48, Exhaustive: true, Strategy: "exhaustive"},
			"Ran every order of the agent's parallel calls that may change the outcome: 48 orders (3 rounds of calls in flight together). The others of the " + bigCount(countCap) + " possible only swap calls on different entities, which commute, so they were not run."},
		{Exploration{Explored: 1, Strategy: "replay"}, "Ran the one schedule asked for"},
		{Exploration{}, "No two calls were ever in flight together"},
	} {
		if got := c.ex.String(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%+v:\n got %s\nwant %s", c.ex, got, c.want)
		}
	}
}
