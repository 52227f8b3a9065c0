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
