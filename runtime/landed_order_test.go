package runtime

import (
	"context"
	"errors"
	"testing"
)

func windowOp(id string, st Status, order int, before, after string, seen bool) Operation {
	ev := effectView{order: order, seen: seen, inCluster: !seen, clusterKeys: 2, before: before, after: after}
	o := Operation{ID: id, Name: "charge", Kind: KindWrite, Status: st, Identity: `"o1"`, Invocation: 1,
		Overlapped: !seen, more: judgedMore(&ev), Args: Args{Names: []string{"order"}, Values: []any{"o1"}}}
	if seen {
		o.StateChange = DescribeChange(before, after)
	}
	return o
}

// Landed call executed first but is later in tr.Ops (its rival was called
// first, held at its gate): the order they ran in decides, not the list's.
func TestLandedCallThatRanFirstButIsListedLast(t *testing.T) {
	for _, swap := range []bool{false, true} {
		landedOp := windowOp("1:charge#2", StatusFailed, 1, `{}`, `{"charges":["o1"]}`, true)
		succ := windowOp("1:charge#1", StatusSuccess, 2, `{"charges":["o1"]}`, `{"charges":["o1","o1"]}`, true)
		ops := []Operation{succ, landedOp}
		if swap {
			ops = []Operation{landedOp, succ}
		}
		fs := judgeRepeats(&Trace{Ops: ops}, `{"charges":["o1","o1"]}`, `{"charges":["o1"]}`, nil, false, false)
		if len(fs) != 1 || fs[0].Code != CodeDuplicateWrite {
			t.Errorf("landed call listed first=%v: findings %v, want one duplicate_write", swap, fs)
		}
	}
}

// The retry ran in a cluster with another write (not seen alone).
func TestLandedCallRetriedInACluster(t *testing.T) {
	landedOp := windowOp("1:charge#1", StatusFailed, 1, `{}`, `{"charges":["o1"]}`, true)
	retry := windowOp("1:charge#2", StatusSuccess, 2, `{"charges":["o1"]}`, `{"charges":["o1","o1"],"x":1}`, false)
	fs := judgeRepeats(&Trace{Ops: []Operation{landedOp, retry}}, `{"charges":["o1","o1"],"x":1}`, `{"charges":["o1"]}`, nil, false, false)
	if len(fs) != 1 || fs[0].Code != CodeDuplicateWrite {
		t.Errorf("findings %v, want one duplicate_write: the retry may have booked again", fs)
	}
}

// Audit log records every attempt, declined or not.
func TestDeclinedChargeRetriedWithBothAttemptsAudited(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order", "card"}}
	w := &kvWorld{}
	agent := func(ctx context.Context) error {
		call := func(card string) error {
			return traced(ctx, charge, []any{"o1", card}, []any{"o1"}, func(context.Context) error {
				var declined bool
				w.do(func(m map[string]any) {
					l, _ := m["attempts"].([]any)
					if card == "expired" {
						m["attempts"] = append(l, "o1:expired:declined")
						declined = true
						return
					}
					m["attempts"] = append(l, "o1:visa:ok")
					c, _ := m["charges"].([]any)
					m["charges"] = append(c, "o1:30")
				})
				if declined {
					return errors.New("card declined: expired")
				}
				return nil
			})
		}
		if err := call("expired"); err != nil {
			return call("visa")
		}
		return nil
	}
	rep := runOn(t, w, nil, agent)
	if got := findings(rep, ScenarioBaseline); len(got) != 0 {
		t.Errorf("baseline findings %v: %s", got, rep.Baseline.Findings[0].Message)
	}
}
