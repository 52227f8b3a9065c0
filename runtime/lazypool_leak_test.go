package runtime

import (
	"context"
	"sync"
	"testing"
)

// The agent starts its worker pool itself, on first use (a sync.Once), and
// never stops it: the worker outlives the invocation that started it, and
// the baseline warns of a goroutine_leak. Run again in the same process
// (go test -count=2, a second test of the same agent), the worker is there
// before the agent runs; it is still the agent's, not one that Setup or the
// test started, and the warning is the same.
func TestLazyPoolOfTheAgentIsALeakOnEveryRun(t *testing.T) {
	put := &Op{Name: "put", Kind: KindWrite, Params: []string{"k"}}
	type job struct {
		ctx  context.Context
		k    string
		done chan error
	}
	var (
		once sync.Once
		jobs = make(chan job)
		stop = make(chan struct{})
		wg   sync.WaitGroup
	)
	defer func() { close(stop); wg.Wait() }()
	worker := func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case j := <-jobs:
				j.done <- traced(j.ctx, put, []any{j.k}, []any{j.k}, func(context.Context) error { return nil })
			}
		}
	}
	agent := func(ctx context.Context) error {
		once.Do(func() { wg.Add(1); go worker() })
		for _, k := range []string{"a", "b"} {
			done := make(chan error, 1)
			jobs <- job{ctx, k, done}
			if err := <-done; err != nil {
				return err
			}
		}
		return nil
	}
	for run := 1; run <= 3; run++ {
		rep, err := Run(context.Background(), t.Name(), agent, OnlyScenario(ScenarioBaseline))
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Has(CodeGoroutineLeak) {
			t.Errorf("run %d: no goroutine_leak for the worker the agent started and left running (findings %v)", run, rep.Findings)
		}
	}
}
