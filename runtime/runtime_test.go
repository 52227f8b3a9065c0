package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInactiveWrapperCallsThrough(t *testing.T) {
	require.False(t, Enabled())
	s := newStore()
	require.NoError(t, s.putTraced(context.Background(), "a", 1))
	assert.Equal(t, 1, s.puts)
	allocs := testing.AllocsPerRun(100, func() { _ = s.putTraced(context.Background(), "a", 1) })
	assert.Zero(t, allocs, "the inactive path must not allocate")
}

func TestRunTracedRecordsCalls(t *testing.T) {
	s := newStore()
	tr, err := RunTraced(context.Background(), "agent", func(ctx context.Context) error {
		if err := s.putTraced(ctx, "k", 7); err != nil {
			return err
		}
		v, err := s.getTraced(ctx, "k")
		if v != 7 {
			return fmt.Errorf("got %d", v)
		}
		return err
	})
	require.NoError(t, err)
	assert.False(t, Enabled(), "the run must end")
	require.Len(t, tr.Ops, 2)
	put, get := tr.Ops[0], tr.Ops[1]
	assert.Equal(t, "1:put#1", put.ID)
	assert.Equal(t, `"k"`, put.Identity)
	assert.Equal(t, `"k"`, put.Entity)
	assert.Equal(t, StatusSuccess, put.Status)
	assert.Equal(t, ObservationReceived, put.Observation)
	assert.True(t, put.Effective())
	assert.Contains(t, put.Site, "runtime_test.go:")
	assert.Equal(t, "1:get#1", get.ID)
	assert.Equal(t, 7, get.Result)
	assert.Empty(t, get.Identity)
	assert.Equal(t, `"k"`, get.Entity)
	assert.Equal(t, 1, tr.Effects("put"))
	assert.Equal(t, 1, tr.EffectsFor("put", `"k"`))

	b, err := put.Args.MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"key":"k","val":7}`, string(b))
}

func TestRedaction(t *testing.T) {
	tr, err := RunTraced(context.Background(), "agent", func(ctx context.Context) error {
		return loginTraced(ctx, "ada", "hunter2")
	})
	require.NoError(t, err)
	op := tr.Ops[0]
	b, _ := op.Args.MarshalJSON()
	assert.JSONEq(t, `{"user":"ada","password":"[redacted]"}`, string(b))
	assert.True(t, strings.HasPrefix(op.Identity, "hmac-sha256:"), op.Identity)
	assert.NotContains(t, op.Identity, "hunter2")

	// Equal secrets still give equal identities, so duplicates are found.
	tr2, _ := RunTraced(context.Background(), "agent", func(ctx context.Context) error {
		return loginTraced(ctx, "ada", "hunter2")
	})
	assert.Equal(t, op.Identity, tr2.Ops[0].Identity)
}

// runWithFault runs fn in a recorder with one planned fault, as the suite does.
func runWithFault(t *testing.T, f Fault, fn func(context.Context) error) (*Trace, []error) {
	t.Helper()
	r := newRecorder("t", f, nil)
	r.start()
	defer r.stop()
	err, _ := r.invoke(context.Background(), fn)
	errs := []error{err}
	if r.crashed {
		err, _ := r.invoke(context.Background(), fn)
		errs = append(errs, err)
	}
	return r.trace(), errs
}

func TestFaultBeforeOperation(t *testing.T) {
	s := newStore()
	var got error
	tr, _ := runWithFault(t, Fault{Kind: FaultBefore, Op: "put", Occurrence: 1}, func(ctx context.Context) error {
		got = s.putTraced(ctx, "k", 1)
		return got
	})
	assert.ErrorIs(t, got, ErrInjected)
	assert.Zero(t, s.puts, "the tool must not run")
	assert.True(t, tr.Fired)
	op := tr.Ops[0]
	assert.Equal(t, StatusFailed, op.Status)
	assert.Equal(t, ObservationFailed, op.Observation)
	assert.Equal(t, FaultBefore, op.Fault)
}

func TestFaultLostAcknowledgement(t *testing.T) {
	s := newStore()
	var got error
	tr, _ := runWithFault(t, Fault{Kind: FaultLostAck, Op: "get", Occurrence: 2}, func(ctx context.Context) error {
		_ = s.putTraced(ctx, "k", 5)
		if _, err := s.getTraced(ctx, "k"); err != nil {
			return err
		}
		v, err := s.getTraced(ctx, "k")
		got = err
		if v != 0 {
			return fmt.Errorf("a lost answer must come back as the zero value, got %d", v)
		}
		return nil
	})
	assert.ErrorIs(t, got, ErrInjected)
	assert.ErrorIs(t, got, context.DeadlineExceeded)
	var timeout interface{ Timeout() bool }
	require.ErrorAs(t, got, &timeout)
	assert.True(t, timeout.Timeout())
	op := tr.Ops[2]
	assert.Equal(t, 2, op.Occurrence, "faults target the k-th call of the op")
	assert.Equal(t, StatusSuccess, op.Status, "the operation ran")
	assert.Equal(t, ObservationLost, op.Observation)
	assert.Equal(t, ObservationReceived, tr.Ops[1].Observation)
}

func TestFaultCrashStopsTheInvocationAndRedelivers(t *testing.T) {
	s := newStore()
	deliveries := 0
	tr, errs := runWithFault(t, Fault{Kind: FaultCrash, Op: "put", Occurrence: 1}, func(ctx context.Context) error {
		deliveries++
		err := s.putTraced(ctx, fmt.Sprint("k", deliveries), 1)
		if err != nil {
			require.ErrorIs(t, ctx.Err(), context.Canceled, "the invocation's context is cancelled")
			// A dead worker makes no more calls: this one must not run.
			_ = s.putTraced(ctx, "after-crash", 1)
			t.Error("the crashed invocation went on after a tool call")
		}
		return err
	})
	require.Len(t, errs, 2, "the crashed invocation is delivered again")
	assert.ErrorIs(t, errs[0], context.Canceled)
	assert.NoError(t, errs[1])
	assert.Equal(t, 2, s.puts, "k1 before the crash and k2 on redelivery; never after-crash")
	assert.Equal(t, 2, tr.Invocations)
	require.Len(t, tr.Ops, 3)
	assert.Equal(t, ObservationLost, tr.Ops[0].Observation)
	assert.Equal(t, StatusFailed, tr.Ops[1].Status)
	assert.Contains(t, tr.Ops[1].Error, "crashed")
	assert.Equal(t, 2, tr.Ops[2].Invocation)
}

func TestFaultOnOpWithoutErrorResultIsNotFired(t *testing.T) {
	tr, _ := runWithFault(t, Fault{Kind: FaultBefore, Op: "notify", Occurrence: 1}, func(ctx context.Context) error {
		notifyTraced("hi")
		return nil
	})
	assert.False(t, tr.Fired)
	assert.Contains(t, tr.FaultNote, "notify has no error result")
	assert.Equal(t, StatusSuccess, tr.Ops[0].Status)
}

func TestToolPanicBecomesAnError(t *testing.T) {
	var got error
	tr, err := RunTraced(context.Background(), "agent", func(ctx context.Context) error {
		got = explodeTraced(ctx, 3)
		return nil
	})
	require.NoError(t, err)
	assert.ErrorIs(t, got, ErrPanicked)
	require.Len(t, tr.Panics, 1)
	assert.Equal(t, "explode 3", tr.Panics[0].Value)
	assert.Contains(t, tr.Panics[0].Stack, "explodeTraced")
	assert.Equal(t, StatusFailed, tr.Ops[0].Status)
}

func TestPanicInGoroutineDoesNotCrash(t *testing.T) {
	tr, err := RunTraced(context.Background(), "agent", func(ctx context.Context) error {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			notifyTraced("boom") // no error result: the goroutine ends
		}()
		wg.Wait()
		return nil
	})
	require.NoError(t, err)
	require.Len(t, tr.Panics, 1)
	assert.Equal(t, "notify exploded", tr.Panics[0].Value)
}

func TestAgentPanicIsRecorded(t *testing.T) {
	tr, err := RunTraced(context.Background(), "agent", func(ctx context.Context) error {
		var m map[string]int
		m["x"] = 1
		return nil
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agent panicked")
	require.Len(t, tr.Panics, 1)
	assert.Contains(t, tr.Panics[0].Value, "nil map")
}

func TestConcurrentCallsGetStableDistinctIDs(t *testing.T) {
	s := newStore()
	const n = 64
	tr, err := RunTraced(context.Background(), "agent", func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.putTraced(ctx, fmt.Sprint("k", i), i)
				if errs[i] == nil {
					_, errs[i] = s.getTraced(ctx, fmt.Sprint("k", i))
				}
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	})
	require.NoError(t, err)
	require.Len(t, tr.Ops, 2*n)
	ids := map[string]bool{}
	occ := map[int]bool{}
	for _, op := range tr.Ops {
		assert.False(t, ids[op.ID], "duplicate id %s", op.ID)
		ids[op.ID] = true
		if op.Name == "put" {
			occ[op.Occurrence] = true
		}
	}
	assert.Len(t, occ, n, "occurrences 1..64, each once")
	assert.Equal(t, n, s.puts)
}

func TestContextlessOpUsesTheOnlyRun(t *testing.T) {
	tr, err := RunTraced(context.Background(), "agent", func(ctx context.Context) error {
		notifyTraced("hello")
		return nil
	})
	require.NoError(t, err)
	require.Len(t, tr.Ops, 1)
	assert.Equal(t, "notify", tr.Ops[0].Name)
	assert.Equal(t, 1, tr.Ops[0].Invocation)
}

// With two runs active, a call of a tool without a context is attributed by
// the goroutine that made it: the invocation it descends from.
func TestContextlessOpIsAttributedByGoroutineWithTwoRuns(t *testing.T) {
	inFirst := make(chan struct{})
	release := make(chan struct{})
	var second *Trace
	var secondErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		second, secondErr = RunTraced(context.Background(), "second", func(ctx context.Context) error {
			<-inFirst
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // a goroutine of the agent's own: still its call
				defer wg.Done()
				notifyTraced("which run?")
			}()
			wg.Wait()
			close(release)
			return nil
		})
	}()
	first, firstErr := RunTraced(context.Background(), "first", func(ctx context.Context) error {
		close(inFirst)
		<-release
		return nil
	})
	<-done
	require.NoError(t, firstErr)
	require.NoError(t, secondErr)
	assert.Empty(t, first.Ops)
	require.Len(t, second.Ops, 1)
	assert.Equal(t, "notify", second.Ops[0].Name)
}

// A call that descends from no invocation (a goroutine started before
// either run) cannot be attributed with two runs active: both runs are
// told, as an error each.
func TestUnattributableCallIsRefusedInEveryRun(t *testing.T) {
	call := make(chan chan struct{})
	go func() { // started before the runs: descends from neither
		for ack := range call {
			notifyTraced("whose?")
			close(ack)
		}
	}()
	defer close(call)
	inFirst := make(chan struct{})
	release := make(chan struct{})
	var second *Trace
	var secondErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		second, secondErr = RunTraced(context.Background(), "second", func(ctx context.Context) error {
			<-inFirst
			ack := make(chan struct{})
			call <- ack
			<-ack
			close(release)
			return nil
		})
	}()
	first, firstErr := RunTraced(context.Background(), "first", func(ctx context.Context) error {
		close(inFirst)
		<-release
		return nil
	})
	<-done
	for _, c := range []struct {
		tr  *Trace
		err error
	}{{first, firstErr}, {second, secondErr}} {
		require.Error(t, c.err)
		assert.Contains(t, c.err.Error(), "call of notify refused: it has no context.Context parameter")
		assert.Contains(t, c.err.Error(), "2 runs active")
		assert.Empty(t, c.tr.Ops)
		assert.Len(t, c.tr.Refused, 1)
	}
}

func TestMarkReplayed(t *testing.T) {
	tr, err := RunTraced(context.Background(), "agent", func(ctx context.Context) error {
		return replayingTraced(ctx)
	})
	require.NoError(t, err)
	assert.True(t, tr.Ops[0].Replayed)
	assert.False(t, tr.Ops[0].Effective())
	MarkReplayed(context.Background()) // outside a call: nothing happens
}

var opReplaying = &Op{Name: "replaying", Kind: KindWrite}

func replayingTraced(ctx context.Context) (aiErr error) {
	aiCall, aiCtx := Begin(ctx, opReplaying, nil, []any{"x"}, nil)
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	MarkReplayed(aiCtx) // what a tool does when its sink answered "already done"
	return aiCall.Finish(nil)
}

func TestInjectedErrorMessages(t *testing.T) {
	for _, k := range []FaultKind{FaultBefore, FaultLostAck, FaultCrash, FaultConflict} {
		err := &InjectedError{Fault: Fault{Kind: k, Op: "refund", Occurrence: 1}}
		assert.True(t, strings.HasPrefix(err.Error(), "refund: "), err.Error())
		assert.ErrorIs(t, err, ErrInjected)
	}
}

// A tool's panic fails the baseline even when the agent goes on and
// returns (explodeTraced turns the panic into an error the agent may
// retry past): the finding says that a tool panicked, not that the agent
// failed. An agent that returns the error fails as before.
func TestBaselineWithAToolPanicTheAgentWentOnFrom(t *testing.T) {
	for _, c := range []struct {
		name, want string
		returnErr  bool
	}{
		{"went on", "a tool panicked without any fault, though the agent went on and returned", false},
		{"returned the error", "the agent failed without any fault", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Run(context.Background(), "agent", func(ctx context.Context) error {
				if err := explodeTraced(ctx, 1); err != nil && c.returnErr {
					return err
				}
				return nil
			})
			require.NoError(t, err)
			require.NotNil(t, rep.Baseline)
			assert.Equal(t, c.returnErr, rep.Baseline.Failed)
			var msg string
			for _, f := range rep.Baseline.Findings {
				if f.Code == CodeBaselineFailed {
					msg = f.Message
				}
			}
			assert.True(t, strings.HasPrefix(msg, c.want), "%q", msg)
			assert.Empty(t, rep.Results, "no fault scenario runs after a failed baseline")
		})
	}
}
