package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// The suite's crash ends the crashed delivery's goroutine at its next call
// with runtime.Goexit, which runs that goroutine's deferred functions; the
// process's death runs none. A framework's deferred end-of-run code may
// then panic, as Eino's graph runner does when run with Stream (rtS #5:
// its deferred callback asserts a stream it never got, on a goroutine
// that never returned). That panic is the suite's own: a correct agent
// whose defer panics only on a goroutine ended in mid-call passes, the
// trace noting the dropped panic; an agent whose defer panics on a normal
// return is still an agent_panic.
func TestCrashGoexitPanicInADeferIsNotTheAgents(t *testing.T) {
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"number"}}
	var (
		mu       sync.Mutex
		invoices map[string]int
	)
	// The sink replays a repeat of a number: the agent is correct.
	write := func(ctx context.Context, number string) (err error) {
		c, _ := Begin(ctx, create, []any{number}, []any{number}, nil)
		if err := c.Start(); err != nil {
			return err
		}
		func() {
			defer c.Recover(&err)
			mu.Lock()
			if invoices[number] == 0 {
				invoices[number]++
			}
			mu.Unlock()
		}()
		return c.Finish(err)
	}
	// run is a graph runner: one turn's two calls in parallel, the first in
	// the runner's own goroutine, and a deferred end-of-graph callback that
	// reads the output the graph produced, taking a nil error to mean the
	// graph ran to its end. buggyDefer panics on a normal return too.
	run := func(ctx context.Context, buggyDefer bool) (err error) {
		var out *string
		defer func() {
			if err == nil && (out == nil || buggyDefer) {
				panic(errors.New("end of graph: output is not a stream"))
			}
		}()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[1] = write(ctx, "INV-2")
		}()
		errs[0] = write(ctx, "INV-1")
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		s := "2 invoices"
		out = &s
		return nil
	}
	setup := Setup(func(context.Context) error {
		mu.Lock()
		invoices = map[string]int{}
		mu.Unlock()
		return nil
	})
	state := State(func() any {
		mu.Lock()
		defer mu.Unlock()
		m := map[string]int{}
		for k, v := range invoices {
			m[k] = v
		}
		return m
	})
	for _, buggy := range []bool{false, true} {
		rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error { return run(ctx, buggy) },
			setup, state, Seed(1))
		if err != nil {
			t.Fatal(err)
		}
		var panics []string
		for _, f := range rep.Findings {
			if f.Code == CodeAgentPanic {
				panics = append(panics, f.Scenario+": "+f.Message)
			}
		}
		if buggy {
			if len(panics) == 0 {
				t.Errorf("buggy defer: no agent_panic; findings %+v", rep.Findings)
			}
			continue
		}
		if len(panics) > 0 {
			t.Errorf("correct agent: agent_panic from a panic the crash's Goexit caused:\n%s", strings.Join(panics, "\n"))
		}
		if !rep.Safe {
			t.Errorf("correct agent: not safe: %+v", rep.Findings)
		}
		noted := false
		for _, res := range rep.Results {
			for _, n := range res.Trace.Notes {
				if strings.Contains(n, "panicked while it unwound") && strings.Contains(n, "end of graph") {
					noted = true
				}
			}
		}
		if !noted {
			t.Errorf("correct agent: no scenario notes the panic the crash's Goexit caused")
		}
	}
}

// The same inside a traced tool: the tool's own body calls two traced
// writes, the charge and, whatever the charge answered, an audit entry;
// its deferred end-of-work check panics on a body that did not run to its
// end. The crash fires at the charge, and ends the goroutine at the audit
// call: the check's panic reaches the outer tool's Recover while the
// Goexit unwinds, and is the suite's, not the tool's.
func TestCrashGoexitPanicInsideAToolIsNotTheTools(t *testing.T) {
	checkout := &Op{Name: "checkout", Kind: KindWrite, Params: []string{"order"}}
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	audit := &Op{Name: "audit", Kind: KindWrite, Params: []string{"order"}}
	var (
		mu   sync.Mutex
		done map[string]bool
	)
	leaf := func(ctx context.Context, op *Op, order string) (err error) {
		c, _ := Begin(ctx, op, []any{order}, []any{order}, nil)
		if err := c.Start(); err != nil {
			return err
		}
		func() {
			defer c.Recover(&err)
			mu.Lock()
			done[op.Name+":"+order] = true // keyed: a repeat changes nothing
			mu.Unlock()
		}()
		return c.Finish(err)
	}
	agent := func(ctx context.Context) (err error) {
		c, cctx := Begin(ctx, checkout, []any{"o-1"}, []any{"o-1"}, nil)
		if err := c.Start(); err != nil {
			return err
		}
		func() {
			defer c.Recover(&err)
			finished := false
			defer func() {
				if !finished {
					panic("checkout: body ended without its result")
				}
			}()
			err = leaf(cctx, charge, "o-1")
			_ = leaf(cctx, audit, "o-1")
			finished = true
		}()
		return c.Finish(err)
	}
	rep, err := Run(context.Background(), t.Name(), agent, OnlyScenario(ScenarioCrashRestart+"/charge#1"),
		Setup(func(context.Context) error {
			mu.Lock()
			done = map[string]bool{}
			mu.Unlock()
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want the crash scenario", len(rep.Results))
	}
	res := rep.Results[0]
	for _, f := range res.Findings {
		if f.Code == CodeAgentPanic {
			t.Errorf("agent_panic from a panic the crash's Goexit caused: %s", f.Message)
		}
	}
	if !res.FaultFired || !strings.Contains(strings.Join(res.Trace.Notes, "\n"), "panicked while it unwound") {
		t.Errorf("fired %v, notes %q: want the crash fired and the dropped panic noted", res.FaultFired, res.Trace.Notes)
	}
}
