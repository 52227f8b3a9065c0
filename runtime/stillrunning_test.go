package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// A goroutine the agent left running (a webhook's work, answered 202
// first) may begin a call after the harness's last wait and before the
// run ends: the call is in the trace, begun and never finished. What it
// did came after the end state was read, and its outcome was never seen;
// the scenario was judged as if the call had not been made, and passed
// (red team: a redelivered webhook's second comment, one run of 16). Made
// to happen in every scenario by a hook at the end of the run: each is
// inconclusive, with a goroutine_leak warning that names the call. Where
// the hook lets the call finish before the run ends, nothing is said.
func TestCallRunningWhenTheRunEndsIsInconclusive(t *testing.T) {
	for _, finish := range []bool{false, true} {
		t.Run(map[bool]string{false: "running", true: "finished"}[finish], func(t *testing.T) {
			st := newStore()
			var (
				mu    sync.Mutex
				saved context.Context
				wg    sync.WaitGroup
			)
			release := make(chan struct{})
			defer func() { close(release); wg.Wait() }()
			testHookRunEnd = func(*recorder) {
				mu.Lock()
				ctx := saved
				mu.Unlock()
				begun, done := make(chan struct{}), make(chan struct{})
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer close(done)
					c, _ := Begin(ctx, leftBehindPut, []any{"b"}, []any{"b"}, nil)
					err := c.Start()
					close(begun)
					if err != nil {
						return
					}
					if !finish {
						<-release // the work goes on after the run
					}
					c.Finish(nil)
				}()
				<-begun
				if finish {
					<-done
				}
			}
			defer func() { testHookRunEnd = nil }()
			rep, err := Run(context.Background(), "still-running", func(ctx context.Context) error {
				mu.Lock()
				saved = ctx
				mu.Unlock()
				return st.putTraced(ctx, "a", 1)
			}, Setup(func(context.Context) error { st = newStore(); return nil }))
			if err != nil {
				t.Fatal(err)
			}
			running := 0
			for _, res := range append([]*Result{rep.Baseline}, rep.Results...) {
				var leak []string
				for _, f := range res.Findings {
					if f.Code == CodeGoroutineLeak && strings.Contains(f.Message, "had begun and not finished when the scenario's run ended") {
						leak = append(leak, f.Message)
					}
				}
				ran := false
				for _, o := range res.Trace.Ops {
					ran = ran || o.Status == StatusRunning
				}
				switch {
				case ran && (!res.Inconclusive || len(leak) != 1 || !strings.HasPrefix(leak[0], "a tool call (put")):
					t.Errorf("%s: a call running when the run ended: inconclusive %v, findings %v", res.Scenario, res.Inconclusive, res.Findings)
				case !ran && len(leak) > 0:
					t.Errorf("%s: no call running when the run ended, yet:\n%s", res.Scenario, strings.Join(leak, "\n"))
				}
				if ran {
					running++
				}
			}
			if finish && running > 0 {
				t.Errorf("the hook's call finished in the run, yet %d scenarios ended with it running", running)
			}
			if !finish && (running == 0 || !rep.Baseline.Inconclusive) {
				t.Errorf("%d scenarios ended with the hook's call running; the baseline inconclusive: %v", running, rep.Baseline.Inconclusive)
			}
		})
	}
}
