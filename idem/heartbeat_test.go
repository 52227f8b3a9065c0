package idem_test

import (
	"context"
	"errors"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentidem/agentidem-go/idem"
)

// extendCounter is a Memory backend that counts the renewals of leases and,
// when lost is set, answers them with ErrLeaseLost (another holder took
// the key).
type extendCounter struct {
	idem.Backend
	mu       sync.Mutex
	extends  int
	lost     bool
	finished bool // Complete or Release was called
	late     int  // renewals after that
}

func (b *extendCounter) Extend(ctx context.Context, key, token string, lease time.Duration) error {
	b.mu.Lock()
	b.extends++
	if b.finished {
		b.late++
	}
	lost := b.lost
	b.mu.Unlock()
	if lost {
		return idem.ErrLeaseLost
	}
	return b.Backend.Extend(ctx, key, token, lease)
}

func (b *extendCounter) Complete(ctx context.Context, key, token string, out idem.Outcome, ttl time.Duration) error {
	b.mu.Lock()
	b.finished = true
	b.mu.Unlock()
	return b.Backend.Complete(ctx, key, token, out, ttl)
}

func (b *extendCounter) Release(ctx context.Context, key, token string) error {
	b.mu.Lock()
	b.finished = true
	b.mu.Unlock()
	return b.Backend.Release(ctx, key, token)
}

func goroutinesCreated(t *testing.T) uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Skip("runtime/metrics does not count created goroutines here")
	}
	return s[0].Value.Uint64()
}

// A call that returns before its first renewal starts no goroutine: the
// lease is renewed from a timer. Before, every Do started one, and the
// test harness, seeing a goroutine created by an invocation, took a stack
// snapshot of the process after each delivery to look for what it left.
func TestDoStartsNoGoroutine(t *testing.T) {
	s := idem.New(idem.NewMemoryBackend(), idem.WithLease(time.Minute))
	ctx := context.Background()
	for i := range 3 { // the first call may set up what the process keeps
		before := goroutinesCreated(t)
		if _, _, err := s.Do(ctx, idem.Key("k", i), "p", func(context.Context) ([]byte, error) { return []byte(`1`), nil }); err != nil {
			t.Fatal(err)
		}
		if n := goroutinesCreated(t) - before; i > 0 && n != 0 {
			t.Fatalf("Do of a quick fn created %d goroutines; want none", n)
		}
	}
}

// A holder whose fn outlives a third of the lease renews it, and stops
// renewing once its outcome is stored. In a testing/synctest bubble: on
// the real clock, with a 30 ms lease and fn sleeping 60 ms, a process that
// the machine's load kept off its CPUs for the whole of fn (2 runs of 200
// beside 3 busy loops) woke with fn's sleep and the renewal both due, fn
// returned first, and no renewal was made, a failure of the test's timing,
// not of the heartbeat. On the bubble's clock the renewals come at 10s,
// 20s, ... 60s, and fn returns at 65s.
func TestHeartbeatRenewsUntilDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &extendCounter{Backend: idem.NewMemoryBackend()}
		s := idem.New(b, idem.WithLease(30*time.Second))
		if _, _, err := s.Do(context.Background(), "slow", "p", func(context.Context) ([]byte, error) {
			time.Sleep(65 * time.Second) // six renewals, 10s apart
			return []byte(`1`), nil
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(40 * time.Second) // a renewal left running would come now
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.extends != 6 {
			t.Errorf("fn ran for 65s of a 30s lease and the lease was renewed %d times; want 6 (every 10s)", b.extends)
		}
		if b.late != 0 {
			t.Errorf("the lease was renewed %d times after the outcome was stored; want none", b.late)
		}
	})
}

// A holder that loses its lease (the backend says another took the key)
// has fn's context cancelled with ErrLeaseLost, so that fn stops.
func TestLostLeaseCancelsFn(t *testing.T) {
	b := &extendCounter{Backend: idem.NewMemoryBackend(), lost: true}
	s := idem.New(b, idem.WithLease(15*time.Millisecond))
	_, _, err := s.Do(context.Background(), "lost", "p", func(ctx context.Context) ([]byte, error) {
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(10 * time.Second):
			return nil, errors.New("fn's context was not cancelled when the lease was lost")
		}
	})
	if !errors.Is(err, idem.ErrLeaseLost) {
		t.Fatalf("Do = %v; want ErrLeaseLost", err)
	}
}

// sleepyExtend is a Memory backend whose renewals take d (a slow
// database; in a testing/synctest bubble, time the bubble must let pass).
type sleepyExtend struct {
	idem.Backend
	d time.Duration
}

func (b *sleepyExtend) Extend(ctx context.Context, key, token string, lease time.Duration) error {
	time.Sleep(b.d)
	return b.Backend.Extend(ctx, key, token, lease)
}

// In a testing/synctest bubble, fn returns while a renewal is under way,
// blocked until the bubble's clock moves on (10s to 15s here). Do waits
// for that renewal durably, so the bubble's time advances, the renewal
// ends and Do returns. Waiting on a sync.Mutex held across the renewal
// is not durable: the bubble's clock stood still, and Do never returned.
func TestDoReturnsWhileARenewalWaitsInABubble(t *testing.T) {
	finished := make(chan struct{})
	go func() { // outside the bubble, on the real clock
		select {
		case <-finished:
		case <-time.After(time.Minute):
			panic("TestDoReturnsWhileARenewalWaitsInABubble: Do did not return: it waits, not durably, for a renewal the bubble's clock must end")
		}
	}()
	defer close(finished)
	synctest.Test(t, func(t *testing.T) {
		s := idem.New(&sleepyExtend{Backend: idem.NewMemoryBackend(), d: 5 * time.Second}, idem.WithLease(30*time.Second))
		if _, _, err := s.Do(context.Background(), "k", "p", func(context.Context) ([]byte, error) {
			time.Sleep(12 * time.Second) // the first renewal began at 10s
			return []byte(`1`), nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// slowExtend is a Memory backend whose renewals take long (a loaded
// database): each one is applied half-way through its round trip.
type slowExtend struct {
	idem.Backend
	half time.Duration
}

func (b *slowExtend) Extend(ctx context.Context, key, token string, lease time.Duration) error {
	time.Sleep(b.half)
	err := b.Backend.Extend(ctx, key, token, lease)
	time.Sleep(b.half)
	return err
}

// A renewal comes a third of the lease after the last one began, as a
// ticker's did, not after it returned: renewals whose round trip takes 24s
// of a 30s lease keep the key (applied 24s apart), and no other call takes
// it over and runs fn a second time. Counting the third from when the
// renewal returned, they were applied 34s apart, the lease ran out
// between them, and the other call ran fn again.
func TestSlowRenewalsKeepTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &slowExtend{Backend: idem.NewMemoryBackend(), half: 12 * time.Second}
		s := idem.New(b, idem.WithLease(30*time.Second))
		var runs atomic.Int32
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _, err := s.Do(context.Background(), "slow-db", "p", func(context.Context) ([]byte, error) {
				runs.Add(1)
				time.Sleep(2 * time.Minute)
				return []byte(`1`), nil
			})
			if err != nil {
				t.Errorf("holder: %v", err)
			}
		}()
		for {
			select {
			case <-done:
				if n := runs.Load(); n != 1 {
					t.Fatalf("fn ran %d times for one key; want 1 (the holder's lease ran out between two slow renewals)", n)
				}
				return
			case <-time.After(time.Second):
			}
			_, _, err := s.Do(context.Background(), "slow-db", "p", func(context.Context) ([]byte, error) {
				runs.Add(1)
				return []byte(`2`), nil
			}, idem.OnInProgress(idem.Fail))
			if err != nil && !errors.Is(err, idem.ErrInProgress) {
				t.Fatalf("other call: %v", err)
			}
		}
	})
}
