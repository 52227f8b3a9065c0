package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInterleavingCounts(t *testing.T) {
	for m, want := range map[int]int{1: 1, 2: 6, 3: 90, 4: 2520} {
		list := interleavings(m)
		assert.Len(t, list, want, "m=%d", m)
		assert.Equal(t, want, countInterleavings(m))
		seen := map[string]bool{}
		for _, o := range list {
			s := Schedule{Rounds: [][]Step{o}}.String()
			assert.False(t, seen[s], "duplicate order %s", s)
			seen[s] = true
		}
	}
	assert.Equal(t, "s0s1f0f1", Schedule{Rounds: [][]Step{interleavings(2)[0]}}.String(), "the first order is the listed one")
}

func TestScheduleStringRoundTrip(t *testing.T) {
	for _, s := range []string{"serial", "s0s1f0f1", "s1s0f1f0.s2s0s1f0f2f1", "s0f0s1f1"} {
		sched, err := ParseSchedule(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, sched.String())
	}
	for _, bad := range []string{"x0", "s0f0", "s0s0f0f0", "f0s0s1f1", "s0s1f0", "s0s2f0f2", "s"} {
		_, err := ParseSchedule(bad)
		assert.Error(t, err, bad)
	}
}

func TestShapeReduction(t *testing.T) {
	mk := func(name, entity string, after ...string) *Call {
		return &Call{op: &Op{Name: name, After: after}, sched: &callSched{label: name}, rec: callRecord{Entity: entity}}
	}
	// Four line items on four rows commute: one order.
	sh := shapeOf([]*Call{mk("a", "r1"), mk("b", "r2"), mk("c", "r3"), mk("d", "r4")})
	assert.Len(t, sh.classes, 4)
	assert.Equal(t, 1, sh.space())
	assert.Equal(t, "s0s1s2s3f0f1f2f3", Schedule{Rounds: [][]Step{sh.order(0)}}.String(), "commuting calls stay in flight together")
	// One entity: every order.
	sh = shapeOf([]*Call{mk("a", "x"), mk("b", "x")})
	assert.Equal(t, 6, sh.space())
	// after= links different entities.
	sh = shapeOf([]*Call{mk("create", "inv"), mk("attach", "order", "create")})
	assert.Equal(t, 6, sh.space())
	// A read with no entity may touch anything.
	sh = shapeOf([]*Call{mk("a", "x"), mk("b", "")})
	assert.Equal(t, 6, sh.space())
}

func TestPCTIsValidAndSeeded(t *testing.T) {
	calls := make([]*Call, 6)
	for i := range calls {
		calls[i] = &Call{op: &Op{Name: "w"}, sched: &callSched{label: fmt.Sprint("w", i)}, rec: callRecord{Entity: "same"}}
	}
	sh := shapeOf(calls)
	assert.False(t, sh.exhaustive(), "a class of 6 is sampled")
	draw := func(seed uint64) []string {
		rng := rand.New(rand.NewPCG(seed, 1))
		var out []string
		for i := 0; i < 20; i++ {
			o := sh.pct(rng, 3)
			s := Schedule{Rounds: [][]Step{o}}.String()
			_, err := ParseSchedule(s)
			require.NoError(t, err, "pct made an invalid order %s", s)
			out = append(out, s)
		}
		return out
	}
	assert.Equal(t, draw(7), draw(7), "same seed, same schedules")
	assert.NotEqual(t, draw(7), draw(8))
}

// pairAgent issues two writes to one entity in parallel and records the
// order they landed in.
type pairWorld struct {
	mu    sync.Mutex
	order []string
}

var opPairA = &Op{Name: "a", Kind: KindWrite, Params: []string{"v"}}
var opPairB = &Op{Name: "b", Kind: KindWrite, Params: []string{"v"}}

func (w *pairWorld) write(ctx context.Context, op *Op, v string) (aiErr error) {
	aiCall, _ := Begin(ctx, op, []any{v}, []any{v}, []any{"entity"})
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	w.mu.Lock()
	w.order = append(w.order, op.Name)
	w.mu.Unlock()
	return aiCall.Finish(nil)
}

func (w *pairWorld) agent(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, op := range []*Op{opPairA, opPairB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.write(ctx, op, op.Name)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func TestExploreAndReplay(t *testing.T) {
	var w *pairWorld
	opts := []Option{
		Setup(func(context.Context) error { w = &pairWorld{}; return nil }),
		Outcome(func() any { return w.order }),
	}
	rep, err := Run(context.Background(), "pair", func(ctx context.Context) error { return w.agent(ctx) }, opts...)
	require.NoError(t, err)
	var names []string
	for _, r := range rep.Results {
		if r.Kind == ScenarioInterleaving {
			names = append(names, r.Schedule)
		}
	}
	assert.Len(t, names, 6, "two dependent calls: all 6 orders of their 4 gates")
	assert.Equal(t, "s0s1f0f1", names[0], "listed first")
	assert.Equal(t, "s1s0f1f0", names[1], "reverse second")
	assert.True(t, rep.Has(CodeConcurrentWritesEntity))
	assert.True(t, rep.Has(CodeOrderVariantOutcome))

	// Replay one schedule: only it runs, and the writes land in its order.
	rep, err = Run(context.Background(), "pair", func(ctx context.Context) error { return w.agent(ctx) }, append(opts, Replay("s1s0f0f1"))...)
	require.NoError(t, err)
	var replayed []*Result
	for _, r := range rep.Results {
		if r.Kind == ScenarioInterleaving {
			replayed = append(replayed, r)
		}
	}
	require.Len(t, replayed, 1)
	assert.Equal(t, "s1s0f0f1", replayed[0].Schedule)
	assert.Equal(t, `["b","a"]`, replayed[0].Outcome)

	// A schedule that does not fit the agent is an error, not a guess.
	_, err = Run(context.Background(), "pair", func(ctx context.Context) error { return w.agent(ctx) }, append(opts, Replay("s0s1s2f0f1f2"))...)
	assert.ErrorContains(t, err, "schedule s0s1s2f0f1f2 does not fit this agent: it has 1 round of 3 calls, but round 1 of the agent has 2 calls")
}

// A lock held across a tool call serializes the calls behind the
// scheduler's back. On real time that is seen for what it is (a goroutine
// blocked on a mutex is quiet), so the suite runs to its verdict: no
// stall, no hang, and the concurrent deliveries go one after the other
// where the lock makes them.
func TestMutexHeldAcrossACallSerializes(t *testing.T) {
	var mu sync.Mutex
	var w *pairWorld
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		for _, op := range []*Op{opPairA, opPairB} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mu.Lock() // held across the tool call
				defer mu.Unlock()
				_ = w.write(ctx, op, op.Name)
			}()
		}
		wg.Wait()
		return nil
	}
	rep, err := Run(context.Background(), "mutex", agent, Setup(func(context.Context) error { w = &pairWorld{}; return nil }),
		StallTimeout(5*time.Second))
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded)
	var notes []string
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			assert.NotEqual(t, CodeStalled, f.Code, "%s: %s", r.Scenario, f.Message)
		}
		if r.Scenario == ScenarioDuplicateConcurrent {
			notes = r.Trace.Notes
		}
	}
	require.NotEmpty(t, notes, "the lockstep says a delivery went on alone")
	assert.Contains(t, notes[0], "went on alone")
	assert.Contains(t, notes[0], "blocked on a sync.Mutex")
}

// A crash of one call of a parallel batch stops the calls of the batch
// still held at their gates: a dead worker does not send them, so the
// redelivery is the only time they run. Under the listed order every call
// starts before any finishes, so this needs an order where a finishes (and
// crashes) before b starts: s0f0s1f1.
func TestCrashStopsHeldCallsOfTheBatch(t *testing.T) {
	var w *pairWorld
	s := NewSuite("pair", func(ctx context.Context) error { return w.agent(ctx) },
		Setup(func(context.Context) error { w = &pairWorld{}; return nil }))
	endSuite(t, s)
	_, err := s.Baseline(context.Background())
	require.NoError(t, err)
	first, _ := ParseSchedule("s0f0s1f1")
	choose := func(round int, shape roundShape) ([]Step, error) {
		if round == 0 {
			return first.Rounds[0], nil
		}
		return shape.order(0), nil // the redelivery: listed
	}
	sc := Scenario{Name: "crash_restart/a#1", Kind: ScenarioCrashRestart, Deliveries: 1,
		Fault: Fault{Kind: FaultCrash, Op: "a", Occurrence: 1}}
	res, _, err := s.runGated(context.Background(), sc, choose, nil)
	require.NoError(t, err)
	assert.True(t, res.FaultFired)
	require.Len(t, res.Duplicates, 1, "%v", res.Duplicates)
	assert.Equal(t, "a", res.Duplicates[0].Op, "a ran, crashed, ran again on redelivery: real")
	assert.Equal(t, 1, res.Trace.Effects("b"), "b was held when a crashed: it ran only on redelivery")
	stopped := 0
	for _, o := range res.Trace.Ops {
		if o.Name == "b" && o.Error == "not executed: the invocation had crashed" {
			stopped++
		}
	}
	assert.Equal(t, 1, stopped)
}

// Counts are capped, never wrapped: two classes of ten calls each have
// more orders than int holds. Before, space multiplied the two capped
// counts into 2^80, which wrapped to 0.
func TestSpaceIsCappedNotWrapped(t *testing.T) {
	ten := make([]int, 10)
	sh := roundShape{classes: [][]int{ten, ten}}
	assert.Equal(t, countCap, countInterleavings(10))
	assert.Equal(t, countCap, sh.space())
	assert.Equal(t, countCap, capMul(countCap, countCap))
}

// A class of calls too large to enumerate has one order, its listed one:
// order builds it without listing the others. It used to list them all,
// and two deliveries of an agent with five parallel writes (a round of ten
// calls) took every byte of memory.
func TestListedOrderOfALargeClassIsNotEnumerated(t *testing.T) {
	for m := 1; m <= maxExhaustive; m++ {
		calls := make([]int, m)
		for i := range calls {
			calls[i] = i
		}
		assert.Equal(t, interleavings(m)[0], listedSteps(calls), "m=%d", m)
	}
	interleavingCache.Lock()
	delete(interleavingCache.m, maxExhaustive+1)
	interleavingCache.Unlock()
	calls := []int{0, 1, 2, 3, 4}
	shape := roundShape{labels: []string{"a", "b", "c", "d", "e"}, classes: [][]int{calls}}
	var steps []Step
	allocs := testing.AllocsPerRun(1, func() { steps = shape.order(0) })
	assert.Equal(t, listedSteps(calls), steps)
	assert.Less(t, allocs, 10.0, "order(0) of a class of 5 enumerated its 113400 orders")
	interleavingCache.Lock()
	_, listed := interleavingCache.m[maxExhaustive+1]
	interleavingCache.Unlock()
	assert.False(t, listed, "the orders of a class of %d were listed", maxExhaustive+1)

	big := make([]int, 10)
	for i := range big {
		big[i] = i
	}
	steps = roundShape{labels: make([]string, 10), classes: [][]int{big}}.order(0)
	require.Len(t, steps, 20)
	for i, st := range steps {
		assert.Equal(t, Step{Call: i % 10, Finish: i >= 10}, st)
	}
}
