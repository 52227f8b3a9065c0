package runtime

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// txPayer is a transactional agent: a traced pay, then the commit,
// untraced (a payment). A failed attempt is rolled back and retried
// (correct) or committed as well (buggy). After each commit, world runs:
// the world's own services acting on the order (they take delay(run), run
// 0 being the baseline's agent).
func txPayer(w *kvWorld, commitFailed bool, world func(run int, done func())) (func(context.Context) error, *sync.WaitGroup) {
	return txCommitter(w, commitFailed, func(m map[string]any) {
		n, _ := m["payments"].(int)
		m["payments"] = n + 1
	}, world)
}

// txCommitter is txPayer with the commit given.
func txCommitter(w *kvWorld, commitFailed bool, commit func(m map[string]any), world func(run int, done func())) (func(context.Context) error, *sync.WaitGroup) {
	pay := &Op{Name: "pay", Kind: KindWrite, Params: []string{"order"}}
	var (
		pending sync.WaitGroup
		runs    atomic.Int32
	)
	return func(ctx context.Context) error {
		run := int(runs.Add(1)) - 1
		var err error
		for attempt := 0; attempt < 2; attempt++ {
			err = traced(ctx, pay, []any{"o-1"}, []any{"o-1"}, func(context.Context) error { return nil })
			if err != nil && !commitFailed {
				continue
			}
			w.do(commit)
			if world != nil {
				pending.Add(1)
				world(run, pending.Done)
			}
			if err == nil {
				break
			}
		}
		return err
	}, &pending
}

// verdict runs the agent's lost_acknowledgement scenario and returns its
// result.
func verdict(t *testing.T, w *kvWorld, agent func(context.Context) error, pending *sync.WaitGroup, opts ...Option) *Result {
	t.Helper()
	opts = append(opts, OnlyScenario(ScenarioLostAck+"/pay#1"),
		Teardown(func(context.Context) error { pending.Wait(); return nil }))
	rep := runOn(t, w, nil, agent, opts...)
	require.True(t, rep.BaselineSucceeded, "baseline: %s", rep.BaselineFailure)
	require.Len(t, rep.Results, 1)
	return rep.Results[0]
}

func hasCode(res *Result, code string) bool {
	for _, f := range res.Findings {
		if f.Code == code {
			return true
		}
	}
	return false
}

// The world's services confirm an order 60 ms after its commit and ship it
// 70 ms later: the baseline's state changes for 130 ms after its agent
// returned, and a run must hold still 265 ms to match. Every run waited
// 300 ms at most, never held still that long, and the repeat of a correct
// transactional agent was counted (review of 461f5c3: 3 runs of 3). The
// wait now lasts as long as the baseline calls for, and longer for a run
// that a loaded machine slows (the test below); the agent that commits
// its failed attempt is still caught.
func TestWorldThatConfirmsThenShipsIsJudgedByItsEnd(t *testing.T) {
	for _, c := range []struct {
		name  string
		buggy bool
	}{{"rolled back", false}, {"failed attempt committed", true}} {
		t.Run(c.name, func(t *testing.T) {
			w := &kvWorld{}
			agent, pending := txPayer(w, c.buggy, confirmThenShip(w, 60*time.Millisecond, 70*time.Millisecond, 70*time.Millisecond))
			res := verdict(t, w, agent, pending)
			assert.Equal(t, c.buggy, hasCode(res, CodeDuplicateWrite), "findings %v; notes %v", res.Findings, res.Trace.Notes)
			assert.False(t, res.Inconclusive, "notes %v", res.Trace.Notes)
		})
	}
}

// As above, with the run's world slower than the baseline's, as a loaded
// machine makes it (a CI runner, several go test -race at once): the
// baseline's ships 70 ms after the confirmation, the run's 130 ms after
// it. The run's wait let its last change come 10 ms later than the
// baseline's, and the correct agent's run was inconclusive on every run
// (before, on a machine shared with three busy loops, in 4 runs of 40
// with the worlds alike); it now holds still, within the wait, and is
// judged by its end. The agent that commits its failed attempt is caught.
func TestWorldSlowerInTheRunThanInTheBaselineIsJudgedByItsEnd(t *testing.T) {
	for _, c := range []struct {
		name  string
		buggy bool
	}{{"rolled back", false}, {"failed attempt committed", true}} {
		t.Run(c.name, func(t *testing.T) {
			w := &kvWorld{}
			agent, pending := txPayer(w, c.buggy, confirmThenShip(w, 60*time.Millisecond, 70*time.Millisecond, 130*time.Millisecond))
			res := verdict(t, w, agent, pending)
			assert.Equal(t, c.buggy, hasCode(res, CodeDuplicateWrite), "findings %v; notes %v", res.Findings, res.Trace.Notes)
			assert.False(t, res.Inconclusive, "notes %v", res.Trace.Notes)
		})
	}
}

// A world that bumps a counter in the state every 30 ms never holds still.
// The repeat was counted, for the correct agent too. Now, where the ends
// differ only in what the world changed by itself, the repeat is unjudged,
// the scenario inconclusive, and its note says what to do; the agent that
// commits its failed attempt leaves a second payment that held from when
// it returned, outside the world's places, and is caught (review of
// 1bec79b: it was left inconclusive).
func TestWorldWithAHeartbeatLeavesTheRepeatUnjudged(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		w := &kvWorld{}
		stop := make(chan struct{})
		var beat sync.WaitGroup
		beat.Add(1)
		go func() {
			defer beat.Done()
			tk := time.NewTicker(30 * time.Millisecond)
			defer tk.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tk.C:
					w.do(func(m map[string]any) {
						if m != nil {
							n, _ := m["beat"].(int)
							m["beat"] = n + 1
						}
					})
				}
			}
		}()
		agent, pending := txPayer(w, buggy, nil)
		res := verdict(t, w, agent, pending)
		close(stop)
		beat.Wait()
		assert.Equal(t, buggy, hasCode(res, CodeDuplicateWrite), "buggy=%v: findings %v", buggy, res.Findings)
		if !buggy {
			assert.True(t, res.Inconclusive, "notes %v", res.Trace.Notes)
			assert.Contains(t, strings.Join(res.Trace.Notes, "\n"), "was not judged")
		}
	}
}

// The world's service confirms the order 10 ms after the commit in the
// baseline and 40 ms after it in the run: the run's end held still
// (25 ms) before its confirmation landed, and differed from the baseline's
// only in that. It was counted as a second payment; the repeat is now
// unjudged, the scenario inconclusive (or, where the machine's load let
// the confirmation land before the end was read, judged by it). An agent
// that commits its failed attempt as well leaves two payments, and is
// caught.
func TestRunEndReadBeforeTheWorldsOwnChangeIsUnjudged(t *testing.T) {
	for _, c := range []struct {
		name  string
		buggy bool
	}{{"rolled back", false}, {"failed attempt committed", true}} {
		t.Run(c.name, func(t *testing.T) {
			w := &kvWorld{}
			agent, pending := txPayer(w, c.buggy, func(run int, done func()) {
				delay := 40 * time.Millisecond
				if run == 0 {
					delay = 10 * time.Millisecond
				}
				time.AfterFunc(delay, func() {
					defer done()
					w.do(func(m map[string]any) { m["confirmed"] = true })
				})
			})
			res := verdict(t, w, agent, pending)
			assert.Equal(t, c.buggy, hasCode(res, CodeDuplicateWrite), "findings %v; notes %v", res.Findings, res.Trace.Notes)
			if !c.buggy && !res.Inconclusive {
				// A loaded machine may delay the run's reads past its
				// confirmation: its end then holds it, and the repeat is
				// judged by the end as the baseline's.
				last := res.Trace.Ops[len(res.Trace.Ops)-1]
				assert.Equal(t, RepeatAbsorbed, last.Repeat, "notes %v", res.Trace.Notes)
			}
		})
	}
}

// overwriteWorld puts the world's changes (from ret to last) in a run's
// state, and noneLanded says whether the run held none of them: nested
// keys, keys added and removed; a value the baseline never held, or a
// second payment, stays the run's.
func TestOverwriteWorldAndNoneLanded(t *testing.T) {
	ret := map[string]any{"order": map[string]any{"paid": true, "status": "new"}, "lock": "held", "payments": 1.0}
	last := map[string]any{"order": map[string]any{"paid": true, "status": "confirmed"}, "confirmed_at": "t1", "payments": 1.0}
	run := map[string]any{"order": map[string]any{"paid": true, "status": "new"}, "lock": "held", "payments": 1.0}
	assert.True(t, noneLanded(run, ret, last))
	assert.Equal(t, last, overwriteWorld(run, ret, last))

	second := map[string]any{"order": map[string]any{"paid": true, "status": "new"}, "lock": "held", "payments": 2.0}
	assert.True(t, noneLanded(second, ret, last))
	assert.NotEqual(t, last, overwriteWorld(second, ret, last), "a second payment is not the world's")

	partly := map[string]any{"order": map[string]any{"paid": true, "status": "new"}, "confirmed_at": "t2", "lock": "held", "payments": 1.0}
	assert.False(t, noneLanded(partly, ret, last), "the world's confirmed_at landed in the run")

	other := map[string]any{"order": map[string]any{"paid": true, "status": "cancelled"}, "lock": "held", "payments": 1.0}
	assert.False(t, noneLanded(other, ret, last), "a value the baseline never held")

	assert.True(t, noneLanded(run, ret, ret))
	assert.Equal(t, run, overwriteWorld(run, ret, ret), "a baseline whose world changed nothing after the return")
}

// An authorization hold the world's capture service moves to captured,
// once per order, 20 ms after the commit: the agent that commits its failed
// attempt holds twice, and its end, where the capture landed, still holds
// 10 (the baseline's: 0). The capture landed in part of the run's end (the
// captured key), so the end speaks: a duplicate, not an end read before
// the world (review of 1bec79b). The correct agent is no duplicate.
func TestHoldLeftBesideTheWorldsCaptureIsCaught(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		w := &kvWorld{}
		var captured sync.Map // the runs whose order the service captured
		agent, pending := txCommitter(w, buggy, func(m map[string]any) {
			n, _ := m["held"].(int)
			m["held"] = n + 10
		}, func(run int, done func()) {
			if _, again := captured.LoadOrStore(run, true); again {
				done()
				return
			}
			time.AfterFunc(20*time.Millisecond, func() {
				defer done()
				w.do(func(m map[string]any) {
					n, _ := m["held"].(int)
					m["held"] = n - 10
					m["captured"] = 10
				})
			})
		})
		res := verdict(t, w, agent, pending)
		assert.Equal(t, buggy, hasCode(res, CodeDuplicateWrite), "buggy=%v: findings %v; notes %v", buggy, res.Findings, res.Trace.Notes)
		assert.False(t, res.Inconclusive, "buggy=%v: notes %v", buggy, res.Trace.Notes)
	}
}

// The world's services confirm an order 15 ms after its commit and ship it
// 30 ms later in the baseline, 200 ms later in the run: the run's end held
// still at "confirmed", a state the baseline's world went through on its
// way to "shipped". It was counted as a second payment (review of 1bec79b,
// probe P4); it is now unjudged (or judged by the end, where the machine's
// load let the shipping land first). The agent that commits its failed
// attempt as well leaves two payments, and is caught.
func TestRunEndReadMidwayThroughTheWorldsChangesIsUnjudged(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		w := &kvWorld{}
		agent, pending := txPayer(w, buggy, confirmThenShip(w, 15*time.Millisecond, 30*time.Millisecond, 200*time.Millisecond))
		res := verdict(t, w, agent, pending)
		assert.Equal(t, buggy, hasCode(res, CodeDuplicateWrite), "buggy=%v: findings %v; notes %v", buggy, res.Findings, res.Trace.Notes)
	}
}

// confirmThenShip is the world of an order its services confirm (confirm
// after the payment's commit) and then ship: shipBase later in the
// baseline (run 0), shipRun later in the other runs. done is called once
// it shipped.
func confirmThenShip(w *kvWorld, confirm, shipBase, shipRun time.Duration) func(run int, done func()) {
	return func(run int, done func()) {
		ship := shipRun
		if run == 0 {
			ship = shipBase
		}
		time.AfterFunc(confirm, func() {
			w.do(func(m map[string]any) { m["status"] = "confirmed" })
			time.AfterFunc(ship, func() {
				defer done()
				w.do(func(m map[string]any) { m["status"] = "shipped" })
			})
		})
	}
}
