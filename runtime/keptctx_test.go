package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client built once, on the first request, keeps that request's context,
// and every later invocation's calls carry it: the context of a run that
// has ended (the baseline's). The calls are made on each invocation's own
// goroutine, so they are that invocation's, told by the goroutine as a
// call with context.Background() is, with a context_detached warning; they
// used to be taken for late calls of the ended run, every later scenario
// traced none of them (duplicate_delivery passed with no call), and the
// naive retry of a charge was missed. The charge made idempotent at the
// sink passes, with the warning.
func TestCallWithAContextKeptFromAnEndedRunIsTheRunningInvocations(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	for _, keyed := range []bool{false, true} {
		t.Run(map[bool]string{false: "naive", true: "keyed"}[keyed], func(t *testing.T) {
			w := &kvWorld{}
			var (
				once sync.Once
				kept context.Context // the first invocation's
			)
			agent := func(ctx context.Context) error {
				once.Do(func() { kept = ctx })
				do := func() error {
					return traced(kept, charge, []any{"o-1"}, []any{"o-1"}, func(context.Context) error {
						return w.do(func(m map[string]any) {
							if keyed {
								m["o-1"] = 1
								return
							}
							n, _ := m["o-1"].(int)
							m["o-1"] = n + 1
						})
					})
				}
				if err := do(); err != nil {
					return do()
				}
				return nil
			}
			rep := runOn(t, w, nil, agent)
			codes := map[string][]string{}
			for _, res := range rep.Results {
				for _, f := range res.Findings {
					codes[res.Scenario] = append(codes[res.Scenario], f.Code)
				}
				if res.Kind == ScenarioDuplicateSeq || res.Kind == ScenarioDuplicateConcurrent {
					assert.Len(t, res.Trace.Ops, 2, "%s: both deliveries' calls are traced", res.Scenario)
				}
			}
			for _, f := range rep.Baseline.Findings {
				assert.NotEqual(t, CodeGoroutineLeak, f.Code, "the later scenarios' calls are not the baseline's: %s", f.Message)
			}
			all := ""
			for _, sc := range []string{ScenarioLostAck + "/charge#1", ScenarioDuplicateSeq} {
				got := strings.Join(codes[sc], " ")
				assert.Equal(t, !keyed, strings.Contains(got, CodeDuplicateWrite), "%s: %s", sc, got)
			}
			for _, c := range codes {
				all += strings.Join(c, " ") + " "
			}
			assert.Contains(t, all, CodeContextDetached, "the kept context is reported (once per site)")
			require.Equal(t, keyed, rep.Safe)
		})
	}
}

// The same client, built anew per scenario, keeps the context of the
// scenario's first delivery, and the restart after a crash calls with it:
// the context of the crashed invocation. A handler that skips a message it
// marked done, charges, then marks it done charges again when the crash
// falls between the charge and the mark. The restart's charge was taken
// for the crashed delivery's, refused as a call the crash stopped, and the
// duplicate went unseen (SAFE). It is the restart's, told by its
// goroutine. A redelivery after the first one returned (duplicate_delivery/
// sequential, with no check before the charge) charges with the returned
// delivery's context: its call is the second delivery's too.
func TestCallWithAContextKeptFromACrashedDeliveryIsTheRestarts(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"msg"}}
	isDone := &Op{Name: "is_done", Kind: KindRead, Params: []string{"msg"}}
	mark := &Op{Name: "mark_done", Kind: KindWrite, Params: []string{"msg"}, Idempotent: true}
	w := &kvWorld{}
	var (
		mu   sync.Mutex
		kept context.Context // the scenario's first delivery's
	)
	// keep returns the context the client keeps: the scenario's first.
	keep := func(ctx context.Context) context.Context {
		mu.Lock()
		defer mu.Unlock()
		if kept == nil {
			kept = ctx
		}
		return kept
	}
	forget := Setup(func(context.Context) error {
		mu.Lock()
		kept = nil
		mu.Unlock()
		return nil
	})
	chargeWith := func(k context.Context) error {
		return traced(k, charge, []any{"m-1"}, []any{"m-1"}, func(context.Context) error {
			return w.do(func(m map[string]any) { n, _ := m["charges"].(int); m["charges"] = n + 1 })
		})
	}
	agent := func(ctx context.Context) error {
		var done bool
		if err := traced(ctx, isDone, []any{"m-1"}, nil, func(context.Context) error {
			return w.do(func(m map[string]any) { done = m["done"] == true })
		}); err != nil || done {
			return err
		}
		if err := chargeWith(keep(ctx)); err != nil {
			return err
		}
		return traced(ctx, mark, []any{"m-1"}, []any{"m-1"}, func(context.Context) error {
			return w.do(func(m map[string]any) { m["done"] = true })
		})
	}
	rep := runOn(t, w, nil, agent, forget)
	require.True(t, rep.BaselineSucceeded)
	codes := map[string]string{}
	for _, res := range rep.Results {
		for _, f := range res.Findings {
			codes[res.Scenario] += f.Code + " "
		}
		if res.Scenario == ScenarioCrashRestart+"/charge#1" {
			for _, o := range res.Trace.Ops {
				assert.NotEqual(t, errNotExecutedCrashed, o.Error, "%s: %s was refused as the crashed delivery's", res.Scenario, o.ID)
			}
		}
	}
	assert.Contains(t, codes[ScenarioCrashRestart+"/charge#1"], CodeDuplicateWrite, "the restart charged again: %v", codes)
	assert.NotContains(t, codes[ScenarioDuplicateSeq], CodeDuplicateWrite, "the redelivery found the message done: %v", codes)

	naive := func(ctx context.Context) error { return chargeWith(keep(ctx)) }
	rep = runOn(t, w, nil, naive, forget)
	var ids []string
	for _, res := range rep.Results {
		if res.Scenario == ScenarioDuplicateSeq {
			for _, o := range res.Trace.Ops {
				ids = append(ids, o.ID)
			}
			assert.Contains(t, codesOf(res), CodeDuplicateWrite)
		}
	}
	assert.Equal(t, []string{"1:charge#1", "2:charge#2"}, ids, "the second delivery's call, made with the first's context, is the second's")
}

func codesOf(res *Result) string {
	var s string
	for _, f := range res.Findings {
		s += f.Code + " "
	}
	return s
}
