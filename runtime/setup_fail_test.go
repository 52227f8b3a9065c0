package runtime

import (
	"context"
	"errors"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// hookLog records the hooks that ran, from their goroutines.
type hookLog struct {
	mu  sync.Mutex
	ran []string
}

func (l *hookLog) hook(name string, err error) func(context.Context) error {
	return func(context.Context) error {
		l.mu.Lock()
		l.ran = append(l.ran, name)
		l.mu.Unlock()
		return err
	}
}

func (l *hookLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ran)
}

// Three helpers each give a Setup and its Teardown; the third Setup fails.
// The Teardowns of the two before it run, in the reverse order; the third's
// does not (what it undoes was never made); the baseline is inconclusive
// with the setup error, and no scenario runs.
func TestTeardownsBeforeAFailedSetupRun(t *testing.T) {
	var l hookLog
	op := &Op{Name: "note", Kind: KindWrite, Params: []string{"n"}}
	agent := func(ctx context.Context) error {
		return traced(ctx, op, []any{1}, []any{1}, func(context.Context) error { return nil })
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(l.hook("reset db", nil)), Teardown(l.hook("close db", nil)),
		Setup(l.hook("start worker", nil)), Teardown(l.hook("stop worker", nil)),
		Setup(l.hook("open queue", errors.New("queue down"))), Teardown(l.hook("close queue", nil)))
	if err == nil || !strings.Contains(err.Error(), "baseline: setup: queue down") {
		t.Fatalf("error %v, want the setup error", err)
	}
	want := []string{"reset db", "start worker", "open queue", "stop worker", "close db"}
	if got := l.get(); !slices.Equal(got, want) {
		t.Fatalf("hooks ran %v, want %v", got, want)
	}
	if !rep.Baseline.Inconclusive || rep.Baseline.Error != "setup: queue down" || len(rep.Results) != 0 {
		t.Fatalf("baseline inconclusive %v, error %q, %d scenarios: want inconclusive with the setup error, and none", rep.Baseline.Inconclusive, rep.Baseline.Error, len(rep.Results))
	}
}

// A Setup that calls t.FailNow (runtime.Goexit) ends the suite's goroutine
// as it would the test's; the Teardown of the Setup before it still runs,
// so the worker that one started is stopped.
func TestSetupThatEndsItsGoroutineTearsDownTheOnesBefore(t *testing.T) {
	var l hookLog
	agent := func(context.Context) error { return nil }
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = Run(context.Background(), t.Name(), agent,
			Setup(l.hook("start worker", nil)), Teardown(l.hook("stop worker", nil)),
			Setup(func(context.Context) error { goruntime.Goexit(); return nil }))
		t.Error("Run returned: the Setup's runtime.Goexit should have ended its goroutine")
	}()
	<-done
	if got, want := l.get(), []string{"start worker", "stop worker"}; !slices.Equal(got, want) {
		t.Fatalf("hooks ran %v, want %v", got, want)
	}
}
