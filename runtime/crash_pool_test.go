package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// A tool without an error result, called by a worker of a pool that Setup
// started, after the crash of the invocation whose context the job
// carries: the call can be neither refused (no error to return) nor
// stopped by ending the worker (not the invocation's). It runs, as a
// crashed worker's call would not, so the crash scenario is inconclusive
// and says why, never safe; the worker lives on.
func TestCrashCannotStopAnErrorlessCallOfASetupWorker(t *testing.T) {
	bump := &Op{Name: "bump", Kind: KindWrite, Params: []string{"k"}, NoError: true}
	type job struct {
		ctx  context.Context
		k    string
		done chan struct{}
	}
	var (
		mu     sync.Mutex
		counts map[string]int
		jobs   = make(chan job)
		stop   = make(chan struct{})
		wg     sync.WaitGroup
		live   int
	)
	defer func() { close(stop); wg.Wait() }()
	worker := func() {
		mu.Lock()
		live++
		mu.Unlock()
		defer func() { mu.Lock(); live--; mu.Unlock() }()
		for {
			select {
			case <-stop:
				return
			case j := <-jobs:
				c, _ := Begin(j.ctx, bump, []any{j.k}, []any{j.k}, nil)
				_ = c.Start() // as a generated wrapper of a tool without an error result
				func() {
					defer c.Recover(nil)
					mu.Lock()
					counts[j.k]++
					mu.Unlock()
				}()
				_ = c.Finish(nil)
				close(j.done)
			}
		}
	}
	started := false
	agent := func(ctx context.Context) error {
		for _, k := range []string{"a", "b"} {
			done := make(chan struct{})
			jobs <- job{ctx, k, done}
			<-done
		}
		return nil
	}
	rep, err := Run(context.Background(), t.Name(), agent, OnlyScenario(ScenarioCrashRestart+"/bump#1"),
		Setup(func(context.Context) error {
			if !started {
				started = true
				wg.Go(worker)
			}
			mu.Lock()
			counts = map[string]int{}
			mu.Unlock()
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want the crash scenario", len(rep.Results))
	}
	res := rep.Results[0]
	if !res.FaultFired || !res.Inconclusive || res.Safe {
		t.Errorf("fired %v, inconclusive %v, safe %v: want a fired crash whose scenario is inconclusive", res.FaultFired, res.Inconclusive, res.Safe)
	}
	if notes := strings.Join(res.Trace.Notes, "\n"); !strings.Contains(notes, "could not stop its later call of bump") || !strings.Contains(notes, "inconclusive") {
		t.Errorf("notes %q do not say the crash could not stop the call", notes)
	}
	mu.Lock()
	defer mu.Unlock()
	if live != 1 {
		t.Errorf("%d workers live, want the one Setup started", live)
	}
}
