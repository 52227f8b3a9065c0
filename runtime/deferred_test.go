package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An agent writes through a transaction of its own: its traced pay buffers
// the payment, and the untraced commit at the end of an attempt applies
// what the attempt buffered; an attempt that failed is rolled back (its
// payment dropped) and the agent tries again. No call of pay changes the
// state in its own window, here or in the baseline, and the baseline's
// state changes outside every traced write (the commit). A retry after a
// rollback left one payment, as the baseline did: judged by the end state,
// not counted. An agent that commits the failed attempt pays twice and is
// caught.
func TestWriteWhoseEffectLandsAtAnUntracedCommitIsJudgedByTheEnd(t *testing.T) {
	pay := &Op{Name: "pay", Kind: KindWrite, Params: []string{"order"}}
	for _, c := range []struct {
		name         string
		commitFailed bool // the buggy agent: the failed attempt's payment is committed
		want         string
	}{
		{"rolled back", false, RepeatAbsorbed},
		{"failed attempt committed", true, RepeatDuplicate},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &kvWorld{}
			agent := func(ctx context.Context) error {
				var err error
				for attempt := 0; attempt < 2; attempt++ {
					var pending []string
					err = traced(ctx, pay, []any{"o-1"}, []any{"o-1"}, func(context.Context) error {
						pending = append(pending, "o-1")
						return nil
					})
					if err != nil && !c.commitFailed {
						continue // rolled back: nothing of the attempt stays
					}
					w.do(func(m map[string]any) { // the commit, untraced
						n, _ := m["payments"].(int)
						m["payments"] = n + len(pending)
					})
					if err == nil {
						break
					}
				}
				return err
			}
			rep := runOn(t, w, nil, agent, OnlyScenario(ScenarioLostAck+"/pay#1"))
			res, repeat, dup := judgedRepeat(t, rep)
			assert.Equal(t, c.want, repeat.Repeat, "%s, judged by %s; findings %v", repeat.ID, repeat.JudgedBy, res.Findings)
			assert.Equal(t, JudgedBy(c.want), repeat.JudgedBy)
			assert.Equal(t, c.want == RepeatDuplicate, dup, "duplicate_write: %v", res.Findings)
			notes := strings.Join(res.Trace.Notes, "\n")
			assert.Equal(t, c.want == RepeatAbsorbed, strings.Contains(notes, "changed the state in none of its calls"), "the note of a repeat judged by the end: %q", notes)
		})
	}
}

// judgedRepeat returns the one result of rep, its last repeat judged, and
// whether the result has a duplicate_write.
func judgedRepeat(t *testing.T, rep *Report) (*Result, *Operation, bool) {
	t.Helper()
	require.Len(t, rep.Results, 1)
	res := rep.Results[0]
	var repeat *Operation
	for i := range res.Trace.Ops {
		if o := &res.Trace.Ops[i]; o.Repeat != "" {
			repeat = o
		}
	}
	require.NotNil(t, repeat, "no repeat judged: %+v", res.Trace.Ops)
	dup := false
	for _, f := range res.Findings {
		dup = dup || f.Code == CodeDuplicateWrite
	}
	return res, repeat, dup
}

// JudgedBy is what judged the repeats of the test above.
func JudgedBy(repeat string) string {
	if repeat == RepeatAbsorbed {
		return JudgedByEndState
	}
	return JudgedByCount
}

// The rule at the level of one judgement: a repeat whose executions
// changed the state in no window of their own, here or in the baseline, is
// judged by the end state only where the baseline saw the state change
// outside its traced writes, both runs had their end state once the agent
// returned (nothing landed after: an effect on its way when the end was
// read would be missed), and the run ended as the baseline did.
func TestDeferredEffectJudgedByTheEndOnlyWhereItLandedByReturn(t *testing.T) {
	s0, s1, s2 := `{"payments":0}`, `{"payments":1}`, `{"payments":2}`
	args := Args{Names: []string{"order"}, Values: []any{"o-1"}}
	pay := func(id string, inv, order int) Operation {
		return Operation{ID: id, Name: "pay", Kind: KindWrite, Status: StatusSuccess, Identity: `"o-1"`, Invocation: inv, Args: args,
			more: judgedMore(&effectView{order: order, inCluster: true, seen: true, before: s0, after: s0})}
	}
	base := &Trace{Ops: []Operation{pay("1:pay#1", 1, 1)}, gaps: [][2]string{{s0, s1}}, end: s1, returned: s1}
	run := func(base *Trace, end, returned string) (*Trace, []Finding) {
		tr := &Trace{Ops: []Operation{pay("1:pay#1", 1, 1), pay("1:pay#2", 1, 2)}, end: end, returned: returned}
		return tr, judgeRepeatsIn(nil, tr, end, base.end, windows(base), untracedIn(base, false), false, false, nil)
	}
	tr, fs := run(base, s1, s1)
	assert.Empty(t, fs)
	assert.Equal(t, RepeatAbsorbed, tr.Ops[1].Repeat)
	assert.Equal(t, JudgedByEndState, tr.Ops[1].JudgedBy)
	require.Len(t, tr.Notes, 1)
	assert.Contains(t, tr.Notes[0], "pay changed the state in none of its calls")

	lateBase := *base
	lateBase.returned = s0 // the baseline's payment landed after the agent returned
	noGaps := *base
	noGaps.gaps = nil // nothing changed outside the traced writes: the effect was never seen
	for _, c := range []struct {
		name          string
		base          *Trace
		end, returned string
	}{
		{"the run ended otherwise", base, s2, s2},
		{"the baseline saw no change outside its writes", &noGaps, s1, s1},
		{"no end state", base, "", ""},
	} {
		tr, fs := run(c.base, c.end, c.returned)
		assert.Len(t, fs, 1, c.name)
		assert.Equal(t, RepeatDuplicate, tr.Ops[1].Repeat, c.name)
		assert.Equal(t, JudgedByCount, tr.Ops[1].JudgedBy, c.name)
	}
	// An end read before the state held still (judge.finish) says nothing
	// of how many effects stayed: the repeat is unjudged, and the run
	// inconclusive (Trace.unsettled), not counted.
	for _, c := range []struct {
		name          string
		base          *Trace
		end, returned string
	}{
		{"the state changed after the agent returned", base, s1, s0},
		{"in the baseline, the state changed after the agent returned", &lateBase, s1, s1},
	} {
		tr, fs := run(c.base, c.end, c.returned)
		assert.Empty(t, fs, c.name)
		assert.Empty(t, tr.Ops[1].Repeat, c.name)
		assert.True(t, tr.unsettled, c.name)
		assert.Contains(t, strings.Join(tr.Notes, "\n"), "was not judged", c.name)
	}
	// Held still, both ends stand for what the agents left.
	stillBase := lateBase
	stillBase.endStill = true
	tr, fs = func() (*Trace, []Finding) {
		tr := &Trace{Ops: []Operation{pay("1:pay#1", 1, 1), pay("1:pay#2", 1, 2)}, end: s1, returned: s0, endStill: true}
		return tr, judgeRepeatsIn(nil, tr, s1, stillBase.end, windows(&stillBase), untracedIn(&stillBase, false), false, false, nil)
	}()
	assert.Empty(t, fs)
	assert.Equal(t, RepeatAbsorbed, tr.Ops[1].Repeat)
}

// As above, with a service of the world's own that confirms each payment
// 10 ms after its commit, whoever made it: the state changes after the
// agent returned, in every run alike. The end, read once the state held
// still, is judged as the end the agent left (landedByReturn): the
// rolled-back retry passes, and committing the failed attempt is caught.
// (Read again without that, the end differed from the state when the agent
// returned, and the correct agent's repeat counted.)
func TestWorldThatChangesByItselfAfterTheAgentReturnedIsNoDuplicate(t *testing.T) {
	pay := &Op{Name: "pay", Kind: KindWrite, Params: []string{"order"}}
	for _, c := range []struct {
		name         string
		commitFailed bool
	}{{"rolled back", false}, {"failed attempt committed", true}} {
		t.Run(c.name, func(t *testing.T) {
			w := &kvWorld{}
			var confirms sync.WaitGroup
			agent := func(ctx context.Context) error {
				var err error
				for attempt := 0; attempt < 2; attempt++ {
					err = traced(ctx, pay, []any{"o-1"}, []any{"o-1"}, func(context.Context) error { return nil })
					if err != nil && !c.commitFailed {
						continue
					}
					w.do(func(m map[string]any) { // the commit, untraced
						n, _ := m["payments"].(int)
						m["payments"] = n + 1
					})
					confirms.Add(1)
					time.AfterFunc(10*time.Millisecond, func() { // the world's confirmation service
						defer confirms.Done()
						w.do(func(m map[string]any) {
							n, _ := m["confirmed"].(int)
							m["confirmed"] = n + 1
						})
					})
					if err == nil {
						break
					}
				}
				return err
			}
			rep := runOn(t, w, nil, agent, OnlyScenario(ScenarioLostAck+"/pay#1"),
				Teardown(func(context.Context) error { confirms.Wait(); return nil }))
			require.Len(t, rep.Results, 1)
			dup := false
			for _, f := range rep.Results[0].Findings {
				dup = dup || f.Code == CodeDuplicateWrite
			}
			assert.Equal(t, c.commitFailed, dup, "duplicate_write: %v", rep.Results[0].Findings)
		})
	}
}
