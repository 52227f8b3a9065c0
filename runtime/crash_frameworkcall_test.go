package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// A framework runs each call of a turn in a worker goroutine of its own
// and reads the worker's result once its WaitGroup is done; a worker that
// exits without a result leaves a nil it then uses (Eino's stream-mode
// ToolsNode, rtS #1). The crash fires at the first call; the second
// call's worker, starting after, is refused with the crash's error when
// the adapter marks its calls (FrameworkCall): the framework sees an error,
// nothing nil. Unmarked, the worker is ended (runtime.Goexit) and the
// framework reads the nil.
func TestCrashRefusesAFrameworkWorkersCall(t *testing.T) {
	create := &Op{Name: "create", Kind: KindWrite, Params: []string{"id"}}
	for _, marked := range []bool{true, false} {
		var (
			mu      sync.Mutex
			created map[string]bool
			nils    int
			refused []error
		)
		call := func(ctx context.Context, id string) (res *string, err error) {
			if marked {
				ctx = FrameworkCall(ctx)
			}
			c, _ := Begin(ctx, create, []any{id}, []any{id}, nil)
			if err := c.Start(); err != nil {
				return nil, err
			}
			func() {
				defer c.Recover(&err)
				mu.Lock()
				created[id] = true
				mu.Unlock()
			}()
			if err := c.Finish(err); err != nil {
				return nil, err
			}
			s := "created " + id
			return &s, nil
		}
		agent := func(ctx context.Context) error {
			ids := []string{"a", "b"}
			res := make([]*string, len(ids))
			errs := make([]error, len(ids))
			for i, id := range ids { // one worker after the other, as the crash needs
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					res[i], errs[i] = call(ctx, id)
				}()
				wg.Wait()
			}
			for i := range ids {
				if errs[i] == nil && res[i] == nil {
					mu.Lock()
					nils++
					mu.Unlock()
				}
				if i > 0 && errs[i] != nil {
					mu.Lock()
					refused = append(refused, errs[i])
					mu.Unlock()
				}
			}
			return errors.Join(errs...)
		}
		rep, err := Run(context.Background(), t.Name(), agent, OnlyScenario(ScenarioCrashRestart+"/create#1"),
			Setup(func(context.Context) error {
				mu.Lock()
				created, nils, refused = map[string]bool{}, 0, nil
				mu.Unlock()
				return nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		res := rep.Results[0]
		notes := strings.Join(res.Trace.Notes, "\n")
		if !marked {
			if nils == 0 {
				t.Errorf("unmarked: the crashed worker left no nil result; the test no longer shows why FrameworkCall exists")
			}
			continue
		}
		if nils != 0 || len(refused) == 0 || !errors.Is(refused[0], ErrInjected) || !errors.Is(refused[0], context.Canceled) {
			t.Errorf("marked: %d nil results, refused %v: want the second call refused with the crash's error", nils, refused)
		}
		if !strings.Contains(notes, "refused its later call of create") {
			t.Errorf("marked: notes do not say the call was refused: %s", notes)
		}
		if !res.FaultFired || res.Inconclusive {
			t.Errorf("marked: fired %v, inconclusive %v", res.FaultFired, res.Inconclusive)
		}
	}
}
