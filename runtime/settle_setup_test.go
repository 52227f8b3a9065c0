package runtime

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// Setup opens the customer's account through the shop, whose worker
// welcomes the customer later (an event counted with the shop's others).
// The agent's first write, a charge, times out having done nothing, and
// its retry pays and counts an event. The welcome lands before the retry:
// it is Setup's doing, not the failed charge's. The charge ran once.
func TestLateEffectOfSetupIsNotTheFailedFirstCalls(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	w := &kvWorld{}
	srv := &lateServer{w: w}
	bump := func(m map[string]any) { m["events"] = num(m["events"]) + 1 }
	agent := func(ctx context.Context) error {
		first := true
		var err error
		for range 3 {
			err = traced(ctx, charge, []any{"o1"}, []any{"o1"}, func(context.Context) error {
				if first {
					first = false
					return errors.New("context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
				}
				return w.do(func(m map[string]any) { m["paid"] = "o1"; bump(m) })
			})
			if err == nil || ctx.Err() != nil {
				return err
			}
		}
		return err
	}
	rep := runOn(t, w, nil, agent, Settle(srv.settle), Setup(func(context.Context) error {
		w.mu.Lock()
		w.m = map[string]any{}
		w.mu.Unlock()
		srv.mu.Lock()
		srv.pending = nil
		srv.mu.Unlock()
		srv.later(func() { w.do(func(m map[string]any) { m["welcomed"] = "c1"; bump(m) }) })
		return nil
	}))
	if got := findings(rep, ScenarioBaseline); slices.Contains(got, CodeDuplicateWrite+" charge") {
		t.Fatalf("baseline findings %v: the charge ran once", got)
	}
}
