package idem_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/idem/idemtest"
)

func TestMemoryContract(t *testing.T) {
	idemtest.Run(t, func(t *testing.T) idem.Backend { return idem.NewMemoryBackend() })
}

// naiveMemory is the check-then-insert that idem replaces: look the key up,
// and when it is absent run the work and insert the result. The check and
// the insert are each atomic; the gap between them is the bug.
type naiveMemory struct {
	mu   sync.Mutex
	recs map[string][]byte
}

func (n *naiveMemory) do(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, bool, error) {
	n.mu.Lock()
	r, ok := n.recs[key]
	n.mu.Unlock()
	if ok {
		return r, true, nil
	}
	r, err := fn(ctx)
	if err != nil {
		return nil, false, err
	}
	n.mu.Lock()
	n.recs[key] = r
	n.mu.Unlock()
	return r, false, nil
}

// TestMemoryNaiveCheckThenInsertDuplicates is the control: the same load
// that idem.Do survives makes the naive pattern run the work many times, so
// the exactly-once test is able to fail.
func TestMemoryNaiveCheckThenInsertDuplicates(t *testing.T) {
	n := &naiveMemory{recs: map[string][]byte{}}
	st := idemtest.Hammer(t, idemtest.Goroutines, idemtest.Attempts, idemtest.Work, func(ctx context.Context, fn func(context.Context) ([]byte, error)) ([]byte, bool, error) {
		return n.do(ctx, "k", fn)
	})
	t.Logf("naive check-then-insert, %d goroutines x %d attempts on one key: %v", idemtest.Goroutines, idemtest.Attempts, st)
	if st.Executions < 2 {
		t.Fatalf("control did not duplicate (%v): the load is too weak to prove anything", st)
	}
}

func BenchmarkMemory(b *testing.B) {
	s := idem.NewMemory()
	n := &naiveMemory{recs: map[string][]byte{}}
	idemtest.Benchmarks(b, "",
		idemtest.Impl{Name: "idem", Do: func(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, bool, error) {
			return s.Do(ctx, key, nil, fn)
		}},
		idemtest.Impl{Name: "naive", Do: n.do},
	)
}

// TestMemoryWakesWaitersAtOnce checks that a waiter on the memory backend
// returns the instant the holder completes, not at its next poll: in a
// synctest bubble, time is virtual, so "at once" is exact.
func TestMemoryWakesWaitersAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := idem.NewMemory(idem.WithPollInterval(time.Hour))
		ctx := context.Background()
		finish := make(chan struct{})
		go func() {
			_, _, _ = s.Do(ctx, "k", nil, func(context.Context) ([]byte, error) {
				<-finish
				return []byte(`"done"`), nil
			})
		}()
		synctest.Wait()
		type out struct {
			r   []byte
			rep bool
			at  time.Time
		}
		got := make(chan out, 1)
		go func() {
			r, rep, err := s.Do(ctx, "k", nil, func(context.Context) ([]byte, error) { return []byte(`"again"`), nil })
			if err != nil {
				t.Error(err)
			}
			got <- out{r, rep, time.Now()}
		}()
		time.Sleep(10 * time.Minute) // the waiter's pause has grown long by now
		released := time.Now()
		close(finish)
		o := <-got
		if string(o.r) != `"done"` || !o.rep {
			t.Fatalf("waiter = %q, replayed %v; want the holder's result", o.r, o.rep)
		}
		if d := o.at.Sub(released); d != 0 {
			t.Fatalf("waiter returned %v (virtual time) after the holder completed, want at once", d)
		}
	})
}

// TestMemoryWaiterUnsubscribes checks that a waiter that gives up leaves no
// channel behind, which a later holder (perhaps in another synctest bubble)
// would close.
func TestMemoryWaiterUnsubscribes(t *testing.T) {
	m := idem.NewMemoryBackend()
	s := idem.New(m)
	finish := make(chan struct{})
	done := make(chan struct{})
	running := make(chan struct{})
	go func() {
		defer close(done)
		_, _, _ = s.Do(context.Background(), "k", nil, func(context.Context) ([]byte, error) {
			close(running)
			<-finish
			return nil, nil
		})
	}()
	<-running
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, _, err := s.Do(ctx, "k", nil, nil); err == nil {
		t.Fatal("waiter did not give up at its deadline")
	}
	if n := idem.Waiters(m, "k"); n != 0 {
		t.Fatalf("%d watchers left on the key after the waiter gave up, want 0", n)
	}
	close(finish)
	<-done
}

func TestStoreErrorsIfClassifies(t *testing.T) {
	errQuota := errors.New("quota exceeded")
	s := idem.NewMemory(idem.StoreErrorsIf(func(err error) bool { return errors.Is(err, errQuota) }))
	runs := 0
	fn := func(context.Context) ([]byte, error) { runs++; return nil, errQuota }
	for i := 0; i < 2; i++ {
		_, _, _ = s.Do(context.Background(), "k", nil, fn)
	}
	_, rep, err := s.Do(context.Background(), "k", nil, fn)
	if runs != 1 || !rep || err == nil || err.Error() != "quota exceeded" {
		t.Fatalf("after 3 calls: fn ran %d times, replayed %v, err %v; want 1 run and the stored error replayed", runs, rep, err)
	}
}

// TestSuite: the fault suite's verdicts on agents that use a Store on the
// memory backend (idemtest.Suite: crash_restart and stale keys).
func TestSuite(t *testing.T) {
	idemtest.Suite(t, func(t *testing.T) idem.Backend { return idem.NewMemoryBackend() })
}
