package runtime

import (
	"context"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
)

// goroutineGone waits until goroutine id has exited.
func goroutineGone(id uint64) {
	for {
		ids := map[uint64]bool{}
		goroutineIDs(ids)
		if !ids[id] {
			return
		}
		goruntime.Gosched()
	}
}

// The agent hands its work to a goroutine that a short-lived spawner of
// its own started (the spawner exits at once, as a loop that starts one
// goroutine per item does). That worker descends from the invocation: after
// the crash of its first call it is ended, as the invocation's goroutines
// are, not taken for a worker that Setup or the test started. Its later
// call of a tool without an error result is then stopped, and the crash
// scenario is judged, not inconclusive.
func TestCrashEndsAGoroutineOfTheInvocationWhoseParentExited(t *testing.T) {
	bump := &Op{Name: "bump", Kind: KindWrite, Params: []string{"k"}, NoError: true}
	var (
		mu     sync.Mutex
		counts map[string]int
	)
	call := func(ctx context.Context, k string) {
		c, _ := Begin(ctx, bump, []any{k}, []any{k}, nil)
		_ = c.Start()
		func() {
			defer c.Recover(nil)
			mu.Lock()
			counts[k]++
			mu.Unlock()
		}()
		_ = c.Finish(nil)
	}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the spawner
			spawner := goroutineID()
			go func() { // the worker
				defer wg.Done()
				goroutineGone(spawner)
				call(ctx, "a")
				call(ctx, "b")
			}()
		}()
		wg.Wait()
		return nil
	}
	rep, err := Run(context.Background(), t.Name(), agent, OnlyScenario(ScenarioCrashRestart+"/bump#1"),
		Setup(func(context.Context) error {
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
	notes := strings.Join(res.Trace.Notes, "\n")
	if !res.FaultFired || res.Inconclusive {
		t.Errorf("fired %v, inconclusive %v (notes %q): want a fired crash, judged", res.FaultFired, res.Inconclusive, notes)
	}
	if strings.Contains(notes, "does not descend from the invocation") {
		t.Errorf("notes %q take the invocation's own goroutine for one Setup or the test started", notes)
	}
	var stopped []string
	for _, o := range res.Trace.Ops {
		if o.Invocation == 1 && strings.Contains(o.Error, "the invocation had crashed") {
			stopped = append(stopped, o.ID)
		}
	}
	if len(stopped) != 1 || stopped[0] != "1:bump#2" {
		t.Errorf("calls stopped by the crash: %q, want the crashed invocation's next one (1:bump#2)", stopped)
	}
}
