package runtime

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A correct fan-out: two goroutines each make a keyed create and always
// send its answer, and the agent reads both answers once both are done.
// In crash_restart the crash ends the second goroutine at its call, which
// never sends its answer, and the delivery's own goroutine, which made no
// call since, went on and panicked on the answer missing: an agent_panic,
// an error, in every crash_restart of the correct agent (red team rS #2b).
// A crashed process runs nothing after the crash: a note, no finding. An
// agent that panics without a crash (reading three answers of two) is
// still an agent_panic.
func TestACrashedDeliveryThatGoesOnAndPanicsIsNoFinding(t *testing.T) {
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"order"}}
	for _, want := range []int{2, 3} {
		var mu sync.Mutex
		var invoices map[string]bool
		agent := func(ctx context.Context) error {
			type answer struct {
				id  string
				err error
			}
			ch := make(chan answer, 2)
			var wg sync.WaitGroup
			for _, o := range []string{"O1", "O2"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := traced(ctx, create, []any{o}, []any{o}, func(context.Context) error {
						mu.Lock()
						invoices[o] = true // keyed
						mu.Unlock()
						return nil
					})
					ch <- answer{o, err}
				}()
			}
			wg.Wait()
			close(ch)
			var got []answer
			for a := range ch {
				got = append(got, a)
			}
			sort.Slice(got, func(i, j int) bool { return got[i].id < got[j].id })
			for _, a := range got[:want] { // every goroutine answers
				if a.err != nil {
					return a.err
				}
			}
			return nil
		}
		rep, err := Run(context.Background(), t.Name(), agent,
			Setup(func(context.Context) error { mu.Lock(); invoices = map[string]bool{}; mu.Unlock(); return nil }),
			State(func() any { mu.Lock(); defer mu.Unlock(); return len(invoices) }))
		require.NoError(t, err)
		if want == 3 {
			assert.NotEmpty(t, rep.Baseline.Trace.Panics, "the agent that reads three answers of two panics")
			continue
		}
		noted := false
		for _, r := range rep.Results {
			for _, f := range r.Findings {
				assert.NotEqual(t, CodeAgentPanic, f.Code, "%s: %s", r.Scenario, f.Message)
			}
			if strings.HasPrefix(r.Scenario, ScenarioCrashRestart) {
				noted = noted || strings.Contains(strings.Join(r.Trace.Notes, "\n"), "its own code went on where the crash did not stop it")
			}
		}
		assert.True(t, noted, "no crash_restart says the crashed delivery panicked after its crash")
	}
}
