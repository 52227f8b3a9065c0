package testkit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// collectorAgent starts a pool of two workers of its own, hands them one
// write per key over a channel, and collects their answers over another
// with plain receives (no select on ctx), as many agents do: in
// production a crash ends the whole process, collector and all. release,
// closed when the test ends, only lets goleak see the goroutines a crash
// left waiting end.
func collectorAgent(l **tools.Ledger, post bool, release <-chan struct{}) func(context.Context) error {
	return func(ctx context.Context) error {
		keys := []string{"a", "b", "c"}
		jobs := make(chan string)
		results := make(chan error)
		for range 2 {
			go func() {
				for k := range jobs {
					if post {
						results <- (*l).PostTraced(ctx, k, "entry "+k)
					} else {
						results <- (*l).PutTraced(ctx, k, "closed")
					}
				}
			}()
		}
		go func() {
			defer close(jobs)
			for _, k := range keys {
				select {
				case jobs <- k:
				case <-release:
					return
				}
			}
		}()
		var errs []error
		for range keys {
			select {
			case err := <-results:
				errs = append(errs, err)
			case <-release:
				return errors.New("released")
			}
		}
		return errors.Join(errs...)
	}
}

// A crash ends the invocation's goroutines at their next call; the
// agent's own goroutine, waiting for an answer only they would send, was
// left waiting until the stall timeout: every crash_restart scenario of
// a correct agent failed as stalled, and no redelivery ran. Now the
// crashed delivery is taken as gone once none of its goroutines can go on,
// and the invocation is delivered again: the upsert passes, the append is
// caught under crash_restart.
func TestCrashOfAnAgentsOwnPoolIsNoStall(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	for _, c := range []struct {
		name string
		post bool
	}{{"put", false}, {"post", true}} {
		t.Run(c.name, func(t *testing.T) {
			var l *tools.Ledger
			start := time.Now()
			rep := testkit.Run(t, collectorAgent(&l, c.post, release), testkit.NoSummary(), testkit.StallTimeout(3*time.Second),
				testkit.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil }),
				testkit.State(func() any { return l.Snapshot() }))
			// Only "never a hang": a crash scenario that waited for its
			// stall bound instead of taking the delivery as gone fails
			// below (CodeStalled, no "crashed and did not return" note),
			// whatever the time. The suite takes about 1 s alone, 2 to
			// 6 s under -race at load 20, where 2 s failed 15 runs in 20;
			// 30 s is the three crash scenarios' stall bounds (9 s) with
			// room for such a machine.
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the suite took %s", d)
			}
			crashes, gone, dups := 0, 0, 0
			for _, r := range rep.Results {
				if r.Kind != runtime.ScenarioCrashRestart {
					continue
				}
				crashes++
				if r.Trace.Invocations != 2 {
					t.Errorf("%s: %d invocations, want the crashed one and its redelivery", r.Scenario, r.Trace.Invocations)
				}
				for _, n := range r.Trace.Notes {
					if strings.Contains(n, "crashed and did not return") {
						gone++
					}
				}
				for _, f := range r.Findings {
					if f.Code == runtime.CodeDuplicateWrite {
						dups++ // a scenario that repeated more than one post shows each: counted once
						break
					}
				}
			}
			if crashes != 3 || gone == 0 {
				t.Errorf("%d crash scenarios, %d with a delivery taken as gone; want 3, and at least one", crashes, gone)
			}
			for _, f := range rep.Findings {
				switch {
				case f.Code == runtime.CodeStalled:
					t.Errorf("%s stalled: %s", f.Scenario, f.Message)
				case !c.post && f.Severity == runtime.SeverityError:
					t.Errorf("%s %s: %s", f.Scenario, f.Code, f.Message)
				}
			}
			if c.post && dups != crashes {
				t.Errorf("%d of %d crash scenarios found the append's duplicate", dups, crashes)
			}
		})
	}
}

// A crashed delivery that waits for a goroutine the test started (a fake
// model that answers after 60 ms) is waited for, not taken as gone: it
// goes on to its next call, which the crash stops, and returns.
func TestCrashedDeliveryWaitingForASlowFakeModelIsWaitedFor(t *testing.T) {
	var l *tools.Ledger
	model := make(chan chan string)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case reply := <-model:
				time.Sleep(60 * time.Millisecond)
				reply <- "post"
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()
	agent := func(ctx context.Context) error {
		for _, k := range []string{"a", "b"} {
			reply := make(chan string)
			model <- reply
			<-reply
			l.PostTraced(ctx, k, "entry "+k) // best effort: it goes on
		}
		return nil
	}
	rep := testkit.Run(t, agent, testkit.NoSummary(), testkit.StallTimeout(3*time.Second),
		testkit.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil }),
		testkit.State(func() any { return l.Snapshot() }))
	for _, r := range rep.Results {
		if r.Kind != runtime.ScenarioCrashRestart {
			continue
		}
		for _, n := range r.Trace.Notes {
			if strings.Contains(n, "crashed and did not return") {
				t.Errorf("%s: %s", r.Scenario, n)
			}
		}
		for _, f := range r.Findings {
			if f.Code == runtime.CodeStalled {
				t.Errorf("%s stalled: %s", f.Scenario, f.Message)
			}
		}
	}
}
