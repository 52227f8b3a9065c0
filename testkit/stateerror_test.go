package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// dedupDesk opens one ticket per key (a repeat changes nothing) and
// counts the jobs a worker would carry out; pending never drains when the
// worker is stuck.
type dedupDesk struct {
	mu      sync.Mutex
	tickets map[string]int
	pending int
	append  bool // a buggy sink: every call opens a ticket
}

var openDedupOp = &runtime.Op{Name: "open", Kind: runtime.KindWrite, Params: []string{"key"}}

func (d *dedupDesk) open(ctx context.Context, key string) error {
	return tracedCall(ctx, openDedupOp, []any{key}, []any{key}, nil, func(context.Context) error {
		d.mu.Lock()
		defer d.mu.Unlock()
		if _, ok := d.tickets[key]; !ok || d.append {
			d.tickets[key+"#"+strconv.Itoa(len(d.tickets))] = len(d.tickets) + 1
			d.tickets[key] = len(d.tickets)
		}
		d.pending++ // queued for a worker that never comes
		return nil
	})
}

// node is a State with a pointer cycle: it cannot be encoded.
type node struct {
	Name string
	Next *node
}

// A correct agent (its sink opens one ticket per key) whose State could
// not be read around a repeat was counted by its executions and found
// UNSAFE, "one effect done 2 times": a Settle that timed out (a worker
// slower than its bound, or stuck), a State that cannot be encoded (a
// cycle) or that panics (a red team's). The suite could not see whether
// the repeat did anything: the repeat is unjudged and its scenario
// inconclusive, as after a crash; no duplicate_write. A buggy sink under
// the same State is not found SAFE either: its scenarios are inconclusive
// (testkit.FailInconclusive fails the test on them).
func TestAStateThatCouldNotBeReadJudgesNoRepeat(t *testing.T) {
	agent := func(d **dedupDesk) func(context.Context) error {
		return func(ctx context.Context) error {
			err := (*d).open(ctx, "D-1")
			if err != nil { // retry once, as agents do
				err = (*d).open(ctx, "D-1")
			}
			return err
		}
	}
	snapshot := func(d **dedupDesk) map[string]int {
		(*d).mu.Lock()
		defer (*d).mu.Unlock()
		m := map[string]int{}
		for k, v := range (*d).tickets {
			m[k] = v
		}
		return m
	}
	// repeated says a second open began: State fails from then on, in
	// the scenarios' worlds and never in the baseline's, where a State
	// that fails is a configuration error (brokenstate_test.go).
	repeated := func(d **dedupDesk) bool {
		(*d).mu.Lock()
		defer (*d).mu.Unlock()
		return (*d).pending >= 2
	}
	for _, tc := range []struct {
		name  string
		state func(d **dedupDesk) testkit.Option
	}{
		{"settle times out", func(d **dedupDesk) testkit.Option {
			return testkit.SettleUntil(func(context.Context) (bool, error) {
				(*d).mu.Lock()
				defer (*d).mu.Unlock()
				return (*d).pending == 0, nil
			}, 20*time.Millisecond)
		}},
		{"state cannot be encoded", func(d **dedupDesk) testkit.Option {
			return testkit.State(func() any {
				if !repeated(d) {
					return snapshot(d)
				}
				n := &node{Name: "a"}
				n.Next = n
				return map[string]any{"tickets": snapshot(d), "loop": n}
			})
		}},
		{"state panics", func(d **dedupDesk) testkit.Option {
			return testkit.State(func() any {
				if !repeated(d) {
					return snapshot(d)
				}
				panic(errors.New("state reader crashed"))
			})
		}},
	} {
		for _, buggy := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/buggy=%v", tc.name, buggy), func(t *testing.T) {
				var d *dedupDesk
				opts := []testkit.Option{testkit.NoSummary(), tc.state(&d),
					testkit.Setup(func(context.Context) error { d = &dedupDesk{tickets: map[string]int{}, append: buggy}; return nil })}
				if tc.name == "settle times out" {
					opts = append(opts, testkit.State(func() any { return snapshot(&d) }))
				}
				rep := testkit.Run(t, agent(&d), opts...)
				if got := codesIn(rep, runtime.CodeDuplicateWrite); got != "" && !buggy {
					t.Errorf("duplicate_write on a sink that opens one ticket per key:\n%s", got)
				}
				if rep.InconclusiveCount == 0 && (!buggy || rep.Safe) {
					t.Errorf("no inconclusive scenario (safe %v): the repeats were judged though State could not be read", rep.Safe)
				}
				// The notes say what failed and what to do, true of it.
				checked := 0
				for _, res := range rep.Results {
					for _, n := range res.Trace.Notes {
						if !strings.Contains(n, "was not judged") || strings.Contains(n, "after the crash;") {
							continue
						}
						settle := strings.Contains(n, "the world did not go quiet")
						if settle != strings.Contains(n, "fix the Settle, or raise its bound") ||
							!settle && !strings.Contains(n, "State worked in the baseline, but not in this scenario's world") ||
							strings.Contains(n, "goroutine ") || strings.Contains(n, "\n") {
							t.Errorf("%s: the note is not true of its failure (%s): %s", res.Scenario, tc.name, n)
						}
						checked++
					}
				}
				if checked == 0 {
					t.Errorf("no note says that a repeat was not judged")
				}
			})
		}
	}
}
