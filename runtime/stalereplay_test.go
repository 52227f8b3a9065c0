package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// A sink of its own (a payment API's idempotency record, not idem.Store)
// that answers a repeat with MarkReplayed. When Setup does not reset its
// records, every call of every run is replayed from a record no execution
// of that run made, the baseline's too: nothing executed, and the suite
// said SAFE, every fault fired (a red team's, rtM P3, on idem/postgres).
// Such a run is inconclusive with a note; a lost acknowledgement or crash
// that fired on such a replay counts as not fired; ExactlyOnce reports
// the write missing. Reset, the same agent is SAFE, every fault fired: its
// replays follow the run's own execution.
func TestReplayFromARecordSetupLeftIsInconclusive(t *testing.T) {
	pay := &Op{Name: "pay", Kind: KindWrite, Params: []string{"order"}}
	for _, c := range []struct {
		name               string
		reset, exactlyOnce bool
	}{
		{"Reset", true, false},
		{"ResetExactlyOnce", true, true},
		{"NotReset", false, false},
		{"NotResetExactlyOnce", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				done = map[string]bool{"o1": true} // an earlier test's
				paid int
			)
			agent := func(ctx context.Context) error {
				err := traced(ctx, pay, []any{"o1"}, []any{"o1"}, func(ctx context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					if done["o1"] {
						MarkReplayed(ctx)
						return nil
					}
					done["o1"] = true
					paid++
					return nil
				})
				if err != nil { // one retry
					err = traced(ctx, pay, []any{"o1"}, []any{"o1"}, func(ctx context.Context) error {
						mu.Lock()
						defer mu.Unlock()
						if !done["o1"] {
							done["o1"] = true
							paid++
						} else {
							MarkReplayed(ctx)
						}
						return nil
					})
				}
				return err
			}
			opts := []Option{
				Setup(func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					if c.reset {
						done = map[string]bool{}
					}
					paid = 0
					return nil
				}),
				State(func() any { mu.Lock(); defer mu.Unlock(); return paid }),
			}
			if c.exactlyOnce {
				opts = append(opts, ExactlyOnce())
			}
			rep, err := Run(context.Background(), "stale-"+c.name, agent, opts...)
			if err != nil {
				t.Fatal(err)
			}
			fired, faults, notes := 0, 0, 0
			var inconclusive []string
			for _, res := range append([]*Result{rep.Baseline}, rep.Results...) {
				if res.Inconclusive {
					inconclusive = append(inconclusive, res.Scenario)
				}
				if res.Fault != nil {
					faults++
					if res.FaultFired {
						fired++
					}
				}
				for _, n := range res.Trace.Notes {
					if strings.Contains(n, "from a key that no execution of this run made") {
						notes++
					}
				}
			}
			var codes []string
			for _, f := range rep.Findings {
				if f.Severity == SeverityError {
					codes = append(codes, f.Code)
				}
			}
			if c.reset {
				if !rep.Safe || len(inconclusive) > 0 || fired != faults || notes > 0 {
					t.Fatalf("safe %v, errors %v, inconclusive %v, %d of %d faults fired, %d notes: want SAFE, every fault fired", rep.Safe, codes, inconclusive, fired, faults, notes)
				}
				return
			}
			if n := len(rep.Results) + 1; len(inconclusive) != n || notes != n {
				t.Errorf("inconclusive %v, %d notes: want every run of %d inconclusive, with a note", inconclusive, notes, n)
			}
			if fired != faults-2 {
				t.Errorf("%d of %d faults fired: want the lost acknowledgement and the crash, which fired on replays, counted as not fired", fired, faults)
			}
			if c.exactlyOnce != (len(codes) > 0) || c.exactlyOnce && codes[0] != CodeMissingWrite {
				t.Errorf("errors %v: want missing_write with ExactlyOnce only", codes)
			}
		})
	}
}

// A keyed agent whose world and idempotency records are built once, with
// no Setup at all: every scenario runs in the world the one before it
// left, its records included, and the notes blamed "the world Setup gave
// was not fresh", though no Setup was given (red team rtV #11). They say
// that no Setup was given, and what to give; with a Setup that leaves
// the records, the note blames the Setup, as before.
func TestStaleReplayWithNoSetupSaysNoSetupWasGiven(t *testing.T) {
	pay := &Op{Name: "pay", Kind: KindWrite, Params: []string{"order"}}
	for _, withSetup := range []bool{false, true} {
		var (
			mu   sync.Mutex
			done = map[string]bool{}
		)
		agent := func(ctx context.Context) error {
			return traced(ctx, pay, []any{"o1"}, []any{"o1"}, func(ctx context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				if done["o1"] {
					MarkReplayed(ctx)
				}
				done["o1"] = true
				return nil
			})
		}
		var opts []Option
		if withSetup {
			opts = append(opts, Setup(func(context.Context) error { return nil }))
		}
		rep, err := Run(context.Background(), "nosetup", agent, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var notes []string
		for _, res := range rep.Results {
			if res.Inconclusive {
				notes = append(notes, res.Trace.Notes...)
			}
		}
		joined := strings.Join(notes, "\n")
		if joined == "" {
			t.Fatalf("setup %v: no scenario is inconclusive, though its sink replayed keys an earlier one made", withSetup)
		}
		if got := strings.Contains(joined, "no Setup was given, so every scenario ran in the world the one before it left"); got == withSetup {
			t.Errorf("setup %v: the notes say no Setup was given: %v\n%s", withSetup, got, joined)
		}
		if got := strings.Contains(joined, "the world Setup gave was not fresh"); got != withSetup {
			t.Errorf("setup %v: the notes blame the Setup: %v\n%s", withSetup, got, joined)
		}
	}
}
