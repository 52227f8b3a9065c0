package testkit_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// desk is a help desk whose close_all tool closes tickets by calling the
// set_status tool with the context it was given, as a tool that calls
// another tool does. set_status declares after=close_all: it must start
// only once close_all has returned, unless close_all makes it itself.
type desk struct {
	mu     sync.Mutex
	status map[string]string
}

var (
	deskSetOp   = &runtime.Op{Name: "set_status", Kind: runtime.KindWrite, Params: []string{"id", "status"}, Idempotent: true, After: []string{"close_all"}}
	deskCloseOp = &runtime.Op{Name: "close_all", Kind: runtime.KindWrite, Params: []string{"ids"}, Idempotent: true}
)

func (d *desk) set(ctx context.Context, id, st string) error {
	return tracedOp(ctx, deskSetOp, []any{id, st}, func(context.Context) error {
		d.mu.Lock()
		d.status[id] = st
		d.mu.Unlock()
		return nil
	})
}

func (d *desk) closeAll(ctx context.Context) error {
	return tracedOp(ctx, deskCloseOp, []any{"t1,t2"}, func(ctx context.Context) error {
		for _, id := range []string{"t1", "t2"} {
			if err := d.set(ctx, id, "closed"); err != nil {
				return err
			}
		}
		return nil
	})
}

func (d *desk) options() []testkit.Option {
	return []testkit.Option{
		testkit.Setup(func(context.Context) error {
			d.mu.Lock()
			d.status = map[string]string{}
			d.mu.Unlock()
			return nil
		}),
		testkit.NoSummary(),
	}
}

// A tool that calls a tool is not a batch of two: the nested calls name
// their parent, no call is in a batch, and no partial batch failure is
// planned for them. Before, close_all and its set_status calls were one
// batch of three, with three partial_batch_failure scenarios.
func TestToolCallingAToolIsNotABatch(t *testing.T) {
	d := &desk{}
	rep := testkit.Run(t, d.closeAll, d.options()...)
	ops := rep.Baseline.Trace.Ops
	require.Len(t, ops, 3)
	assert.Equal(t, "", ops[0].Parent)
	for _, o := range ops {
		assert.Zero(t, o.Batch, o.ID)
		if o.Name == "set_status" {
			assert.Equal(t, "1:close_all#1", o.Parent, o.ID)
		}
	}
	for _, r := range rep.Results {
		assert.NotEqual(t, runtime.ScenarioPartialBatch, r.Kind, r.Scenario)
	}
}

// The same agent dispatching close_all and a set_status of its own in
// parallel (one model turn): those two are in flight together, and so is
// close_all's nested call with the agent's. set_status after=close_all is
// caught, and only for the agent's own set_status.
func TestParallelCallsNextToANestedCallAreABatch(t *testing.T) {
	d := &desk{}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { errs[0] = d.closeAll(ctx) })
		wg.Go(func() { errs[1] = d.set(ctx, "t9", "open") })
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	rep := testkit.Run(t, agent, d.options()...)
	require.True(t, rep.Has(runtime.CodeDependentCallsConcurrent), "the agent's own set_status ran with close_all")
	for _, f := range rep.Findings {
		if f.Code == runtime.CodeDependentCallsConcurrent {
			require.Len(t, f.Calls, 2, f.Message)
			var dep *runtime.Operation
			for _, r := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
				if r.Scenario == f.Scenario {
					for i := range r.Trace.Ops {
						if r.Trace.Ops[i].ID == f.Calls[1] {
							dep = &r.Trace.Ops[i]
						}
					}
				}
			}
			require.NotNil(t, dep, "call %s of %s", f.Calls[1], f.Scenario)
			assert.Equal(t, "", dep.Parent, "the dependent call is the agent's own: %s", f.Message)
		}
	}
	planned := 0
	for _, r := range rep.Results {
		if r.Kind == runtime.ScenarioPartialBatch {
			planned++
		}
	}
	assert.NotZero(t, planned, "partial batch failures of the parallel pair")
}

// helpDesk's close_all closes each ticket through set_status (an upsert,
// not declared idempotent) and logs what it did through note, all with
// the context it was given. keyed says whether note keys its log entries
// (a set: the fix) or appends them (the bug).
type helpDesk struct {
	keyed  bool
	mu     sync.Mutex
	status map[string]string
	log    []string
}

var (
	hdSetOp   = &runtime.Op{Name: "set_status", Kind: runtime.KindWrite, Params: []string{"id", "status"}}
	hdCloseOp = &runtime.Op{Name: "close_all", Kind: runtime.KindWrite, Params: []string{"ids"}}
	hdNoteOp  = &runtime.Op{Name: "note", Kind: runtime.KindWrite, Params: []string{"text"}}
)

func (d *helpDesk) closeAll(ctx context.Context) error {
	return tracedOp(ctx, hdCloseOp, []any{"t1,t2"}, func(ctx context.Context) error {
		for _, id := range []string{"t1", "t2"} {
			if err := tracedOp(ctx, hdSetOp, []any{id, "closed"}, func(context.Context) error {
				d.mu.Lock()
				d.status[id] = "closed"
				d.mu.Unlock()
				return nil
			}); err != nil {
				return err
			}
		}
		return tracedOp(ctx, hdNoteOp, []any{"closed t1,t2"}, func(context.Context) error {
			d.mu.Lock()
			defer d.mu.Unlock()
			if !d.keyed || !slices.Contains(d.log, "closed t1,t2") {
				d.log = append(d.log, "closed t1,t2")
			}
			return nil
		})
	})
}

func (d *helpDesk) options() []testkit.Option {
	return []testkit.Option{
		testkit.NoSummary(),
		testkit.Setup(func(context.Context) error {
			d.mu.Lock()
			d.status, d.log = map[string]string{}, nil
			d.mu.Unlock()
			return nil
		}),
		testkit.State(func() any {
			d.mu.Lock()
			defer d.mu.Unlock()
			return map[string]any{"status": maps.Clone(d.status), "log": slices.Clone(d.log)}
		}),
	}
}

// The calls a tool makes inside its own are judged by their own
// snapshots: a redelivered close_all sets the tickets closed again, which
// changes nothing (absorbed), and logs again, which does (a duplicate,
// and close_all's with it: its effect holds its calls'). Before, every
// call inside close_all counted as overlapped by close_all itself, and
// the set_status repeats after a crash were duplicate_write ("State saw no
// execution change the world").
func TestCallsInsideAToolAreJudgedByTheirOwnSnapshots(t *testing.T) {
	buggy := &helpDesk{}
	rep := testkit.Run(t, buggy.closeAll, buggy.options()...)
	byScenario := map[string][]string{}
	for _, r := range rep.Results {
		for _, d := range r.Duplicates {
			byScenario[r.Scenario] = append(byScenario[r.Scenario], d.Op)
		}
		for _, o := range r.Trace.Ops {
			if r.Scenario != "duplicate_delivery/concurrent" { // two deliveries in flight do overlap
				assert.False(t, o.Overlapped, "%s: %s overlapped only by the call it was made inside of", r.Scenario, o.ID)
			}
			if o.Name == "set_status" && o.Repeat != "" {
				assert.Equal(t, runtime.RepeatAbsorbed, o.Repeat, "%s: %s sets what is set", r.Scenario, o.ID)
			}
		}
	}
	for _, sc := range []string{"crash_restart/close_all#1", "crash_restart/note#1", "duplicate_delivery/sequential", "duplicate_delivery/concurrent"} {
		assert.ElementsMatch(t, []string{"close_all", "note"}, byScenario[sc], sc)
	}
	// A crash after a set_status: the restart closes that ticket again
	// (absorbed), and does the rest for the first time.
	for _, sc := range []string{"crash_restart/set_status#1", "crash_restart/set_status#2"} {
		assert.Empty(t, byScenario[sc], sc)
	}

	fixed := &helpDesk{keyed: true}
	rep = testkit.Run(t, fixed.closeAll, fixed.options()...)
	assert.True(t, rep.Safe, "%v", rep.Problems)
	assert.False(t, rep.Has(runtime.CodeDuplicateWrite))
}

// reopen is a help desk agent that, in one model turn, closes the desk's
// tickets (close_all of t1, which sets each ticket's status through
// set_status with its own context) and reopens ticket t1 (its own
// set_status). The
// two set_status calls on t1 race: the desk ends with t1 open or closed
// depending on which lands last.
type reopen struct {
	mu     sync.Mutex
	status map[string]string
	desk   []any // close_all's entity: nil, or what it touches itself
}

var (
	roSetOp   = &runtime.Op{Name: "set_status", Kind: runtime.KindWrite, Params: []string{"id", "status"}, Idempotent: true}
	roCloseOp = &runtime.Op{Name: "close_all", Kind: runtime.KindWrite, Params: []string{"ids"}, Idempotent: true}
)

func (d *reopen) call(ctx context.Context, op *runtime.Op, args, entity []any, fn func(context.Context) error) error {
	return tracedCall(ctx, op, args, args, entity, fn)
}

func (d *reopen) set(ctx context.Context, id, st string) error {
	return d.call(ctx, roSetOp, []any{id, st}, []any{id}, func(context.Context) error {
		d.mu.Lock()
		d.status[id] = st
		d.mu.Unlock()
		return nil
	})
}

func (d *reopen) agent(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() {
		errs[0] = d.call(ctx, roCloseOp, []any{"t1"}, d.desk, func(ctx context.Context) error { return d.set(ctx, "t1", "closed") })
	})
	wg.Go(func() { errs[1] = d.set(ctx, "t1", "open") })
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// A call made inside one call of a parallel round races with the other
// calls of the round: the schedules explore it landing before and after
// the agent's own call on the same ticket. Before, the scheduler released
// the rest of the round while close_all waited for its set_status ("the
// schedule could not be followed"), so the nested set_status always ran
// after the agent's: every schedule ended with t1 closed, and the race
// went unreported.
//
// close_all may declare an entity of its own (the desk): what it touches
// itself, not what the calls made inside it touch. Its orders with the
// agent's set_status are explored all the same. Before, the two calls of
// the round were told apart by their entities (desk, t1), one order was
// run, and the race went unreported.
func TestCallsInsideACallOfARoundRaceWithTheRound(t *testing.T) {
	t.Run("no entity", func(t *testing.T) { raceWithTheRound(t, &reopen{}) })
	t.Run("an entity of its own", func(t *testing.T) { raceWithTheRound(t, &reopen{desk: []any{"desk"}}) })
}

func raceWithTheRound(t *testing.T, d *reopen) {
	rep := testkit.Run(t, d.agent, testkit.NoSummary(),
		testkit.Setup(func(context.Context) error { d.mu.Lock(); d.status = map[string]string{}; d.mu.Unlock(); return nil }),
		testkit.Outcome(func() any { d.mu.Lock(); defer d.mu.Unlock(); return d.status["t1"] }))
	assert.True(t, rep.Has(runtime.CodeOrderVariantOutcome), "t1 ends open or closed by the order")
	outcomes := map[string]bool{}
	sameTicket := false
	for _, r := range rep.Results {
		if r.Kind != runtime.ScenarioInterleaving {
			continue
		}
		outcomes[r.Outcome] = true
		assert.Empty(t, r.Trace.Notes, r.Scenario)
		for _, f := range r.Findings {
			if f.Code == runtime.CodeConcurrentWritesEntity && slices.Equal(f.Ops, []string{"set_status", "set_status"}) {
				sameTicket = true
			}
		}
	}
	assert.Equal(t, map[string]bool{`"open"`: true, `"closed"`: true}, outcomes)
	assert.True(t, sameTicket, "close_all's set_status of t1 in flight with the agent's")
	assert.False(t, rep.Safe)
}

// A crash in a call made inside a tool that goes on with its next call
// (a best-effort close_all that ignores a failed set_status) ends the
// tool's goroutine at that next call, inside close_all's body: close_all
// never returns. It is recorded as not finished, and the judge's window of
// it closes there. Before, close_all stayed in flight for the rest of the
// run (status running): every write of the redelivery was overlapped, and
// judged by the end state only.
func TestCrashInsideAToolEndsTheTool(t *testing.T) {
	d := &helpDesk{keyed: true}
	bestEffort := func(ctx context.Context) error {
		return tracedOp(ctx, hdCloseOp, []any{"t1,t2"}, func(ctx context.Context) error {
			for _, id := range []string{"t1", "t2"} {
				_ = tracedOp(ctx, hdSetOp, []any{id, "closed"}, func(context.Context) error {
					d.mu.Lock()
					d.status[id] = "closed"
					d.mu.Unlock()
					return nil
				})
			}
			return nil
		})
	}
	rep := testkit.Run(t, bestEffort, append(d.options(), testkit.With(runtime.OnlyScenario("crash_restart/set_status#1")))...)
	require.Len(t, rep.Results, 1)
	res := rep.Results[0]
	require.True(t, res.FaultFired)
	var outer *runtime.Operation
	for i, o := range res.Trace.Ops {
		if o.ID == "1:close_all#1" {
			outer = &res.Trace.Ops[i]
		}
		if o.Invocation == 2 {
			assert.False(t, o.Overlapped, "%s of the redelivery overlaps nothing", o.ID)
		}
	}
	require.NotNil(t, outer)
	assert.Equal(t, runtime.StatusFailed, outer.Status)
	assert.Equal(t, runtime.ObservationLost, outer.Observation)
	assert.Contains(t, outer.Error, "crashed")
	assert.True(t, res.Safe, "%v", res.Findings)
}

// A call made inside close_all by a goroutine close_all starts and does
// not wait for races with the agent's own set_status all the same: the
// schedules explore it landing before and after. Before, close_all
// reached its finish gate with its set_status waiting at its start gate,
// the finish step released close_all alone, and the nested set_status ran
// after the round: every schedule ended with t1 closed.
func TestCallLeftRunningInsideACallOfARoundRacesWithTheRound(t *testing.T) {
	d := &reopen{}
	agent := func(ctx context.Context) error {
		var wg, left sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() {
			errs[0] = d.call(ctx, roCloseOp, []any{"t1"}, nil, func(ctx context.Context) error {
				left.Go(func() { _ = d.set(ctx, "t1", "closed") })
				return nil
			})
		})
		wg.Go(func() { errs[1] = d.set(ctx, "t1", "open") })
		wg.Wait()
		left.Wait()
		return errors.Join(errs...)
	}
	opts := []testkit.Option{testkit.NoSummary(),
		testkit.Setup(func(context.Context) error { d.mu.Lock(); d.status = map[string]string{}; d.mu.Unlock(); return nil }),
		testkit.Outcome(func() any { d.mu.Lock(); defer d.mu.Unlock(); return d.status["t1"] })}
	rep := testkit.Run(t, agent, opts...)
	outcomes := map[string]bool{}
	for _, r := range rep.Results {
		if r.Kind != runtime.ScenarioInterleaving {
			continue
		}
		outcomes[r.Outcome] = true
		// The schedule replays to the same outcome.
		again := testkit.Run(t, agent, append(opts, testkit.Replay(r.Schedule))...)
		for _, a := range again.Results {
			if a.Kind == runtime.ScenarioInterleaving {
				assert.Equal(t, r.Schedule, a.Schedule)
				assert.Equal(t, r.Outcome, a.Outcome, r.Schedule)
			}
		}
	}
	assert.Equal(t, map[string]bool{`"open"`: true, `"closed"`: true}, outcomes)
	assert.True(t, rep.Has(runtime.CodeOrderVariantOutcome), "t1 ends open or closed by the order")
}
