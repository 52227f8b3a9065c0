package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestSpareCallsAreHandedOutOnce(t *testing.T) {
	r1 := newRecorder("spare", Fault{}, nil)
	first := r1.newCall() // makes a block of 2: one is left
	sp := r1.takeSpare()
	if len(sp.block) != 1 {
		t.Fatalf("takeSpare = %+v, want the one Call left of a block of 2", sp)
	}
	r2 := newRecorder("spare", Fault{}, nil)
	r2.useSpare(sp)
	got := r2.newCall()
	if got != &sp.block[0] {
		t.Errorf("the next recorder made a block instead of using the spare Call")
	}
	// The first recorder still records (a goroutine its agent left behind):
	// it must not hand out the Call it gave away.
	late := r1.newCall()
	if late == got || late == first {
		t.Errorf("a Call was handed out twice")
	}
	if len(r2.takeSpare().block) != 0 {
		t.Errorf("a recorder that used its whole spare block has nothing to hand on")
	}
}

// A run counts the calls of each op name, past the sixteen names it finds
// by a scan as below them; two ops of one name share the count.
func TestOccurrencesOfManyOps(t *testing.T) {
	r := newRecorder("many", Fault{Kind: FaultLostAck, Op: "op17", Occurrence: 2}, nil)
	var seq int32
	for round := int32(1); round <= 2; round++ {
		for i := range 20 {
			op := &Op{Name: fmt.Sprintf("op%d", i)}
			k, s, planned := r.nextNumber(op)
			if k != round || s != seq {
				t.Errorf("round %d, %s: occurrence %d, seq %d; want %d, %d", round, op.Name, k, s, round, seq)
			}
			if want := op.Name == "op17" && round == 2; planned != want {
				t.Errorf("round %d, %s: planned %v, want %v", round, op.Name, planned, want)
			}
			seq++
		}
	}
	if k, _, _ := r.nextNumber(&Op{Name: "op3"}); k != 3 {
		t.Errorf("another Op named op3 got occurrence %d, want 3", k)
	}
}

// leftBehindPut is a write traced by hand, for TestWriterLeftBehindWithState.
var leftBehindPut = &Op{Kind: KindWrite, Name: "put", Params: []string{"k"}, Pos: "recorder_test.go:1"}

// tracedPut calls put through leftBehindPut, as a generated wrapper would.
func tracedPut(ctx context.Context, put func(string), k string) error {
	args := []any{k}
	c, ctx := Begin(ctx, leftBehindPut, args, args[0:1:1], nil)
	if err := c.Start(); err != nil {
		return err
	}
	put(k)
	return c.Finish(nil)
}

// An agent with State that leaves behind a goroutine writing with its
// context: the goroutine's calls open and close the judge's clusters, and
// add to the baseline's record of calling goroutines, while the trace is
// read and judged. Under -race this fails if the harness reads any of them
// without its lock; always, if the goroutine's writes disturb the judgement
// of the run's own (a set: its repeats change nothing, and State sees it).
func TestWriterLeftBehindWithState(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	for range 3 {
		var mu sync.Mutex
		set := map[string]bool{}
		put := func(k string) {
			if k == "late" {
				return // what the goroutine left behind writes, State does not see
			}
			mu.Lock()
			set[k] = true
			mu.Unlock()
		}
		agent := func(ctx context.Context) error {
			for range 3 {
				if err := tracedPut(ctx, put, "a"); err != nil {
					return err
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					tracedPut(ctx, put, "late")
					time.Sleep(20 * time.Microsecond)
				}
			}()
			return nil
		}
		state := func() any {
			mu.Lock()
			defer mu.Unlock()
			return slices.Sorted(maps.Keys(set))
		}
		s := NewSuite("left-behind", agent, State(state), Setup(func(context.Context) error {
			mu.Lock()
			clear(set)
			mu.Unlock()
			return nil
		}))
		base, err := s.Baseline(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range base.Findings {
			if f.Code == CodeDuplicateWrite && slices.Contains(f.Identities, `"a"`) {
				t.Errorf("the baseline's repeats of put(a) changed nothing, yet: %s", f.Message)
			}
		}
		for _, sc := range s.Plan() {
			if _, err := s.RunScenario(context.Background(), sc); err != nil {
				t.Fatal(err)
			}
		}
	}
}
