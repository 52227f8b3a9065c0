package idemtest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DoFunc is one idempotent call under test: run fn at most once for the key
// it was made for, and report the result and whether it was replayed.
type DoFunc func(ctx context.Context, fn func(context.Context) ([]byte, error)) (result []byte, replayed bool, err error)

// Stats counts what a Hammer saw.
type Stats struct {
	// Calls is goroutines × attempts.
	Calls int
	// Executions counts the runs of fn: more than one is a duplicate effect.
	Executions int64
	// Replays counts calls that reported replayed.
	Replays int
	// Identical counts calls whose result equals the result of the first
	// execution.
	Identical int
	// Errors counts calls that failed.
	Errors int
	// FirstErr is one of the errors, if any.
	FirstErr error
	// Elapsed is the wall time of the whole hammer.
	Elapsed time.Duration
}

// Duplicates is Executions − 1 when fn ran at all: the effects done twice.
func (s Stats) Duplicates() int64 {
	if s.Executions == 0 {
		return 0
	}
	return s.Executions - 1
}

// String formats the counts on one line, for test logs and bench output.
func (s Stats) String() string {
	return fmt.Sprintf("calls=%d executions=%d duplicates=%d replays=%d identical=%d errors=%d elapsed=%v",
		s.Calls, s.Executions, s.Duplicates(), s.Replays, s.Identical, s.Errors, s.Elapsed.Round(time.Millisecond))
}

// Hammer makes goroutines × attempts calls of do on one key, all goroutines
// released at once. The fn it passes takes work (at least 1ms) before
// returning a result unique to its execution, so that every gap between a
// check and an insert is wide open and a second execution shows up as a
// different result.
func Hammer(tb testing.TB, goroutines, attempts int, work time.Duration, do DoFunc) Stats {
	tb.Helper()
	var (
		execs   atomic.Int64
		mu      sync.Mutex
		results [][]byte
		flags   []bool
		st      = Stats{Calls: goroutines * attempts}
		start   = make(chan struct{})
		wg      sync.WaitGroup
		firstMu sync.Mutex
		first   []byte
	)
	fn := func(ctx context.Context) ([]byte, error) {
		n := execs.Add(1)
		time.Sleep(work)
		r := fmt.Appendf(nil, `{"execution":%d,"at":%d}`, n, time.Now().UnixNano())
		firstMu.Lock()
		if first == nil {
			first = r
		}
		firstMu.Unlock()
		return r, nil
	}
	ctx := context.Background()
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for a := 0; a < attempts; a++ {
				r, replayed, err := do(ctx, fn)
				mu.Lock()
				if err != nil {
					st.Errors++
					if st.FirstErr == nil {
						st.FirstErr = err
					}
				} else {
					results = append(results, r)
					flags = append(flags, replayed)
				}
				mu.Unlock()
			}
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	st.Elapsed = time.Since(t0)
	st.Executions = execs.Load()
	for i, r := range results {
		if flags[i] {
			st.Replays++
		}
		if bytes.Equal(r, first) {
			st.Identical++
		}
	}
	return st
}
