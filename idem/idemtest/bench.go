package idemtest

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// Impl does work once per key (or tries to): idem's Store.Do on a backend,
// or a naive check-then-insert, for the side-by-side benchmarks.
type Impl struct {
	// Name labels the sub-benchmarks ("idem", "naive").
	Name string
	// Do runs fn for key at most once, if the implementation is right.
	Do func(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, bool, error)
}

// Benchmarks runs, for each implementation, on keys prefixed with prefix:
//
//   - first/NAME: first calls on fresh keys, 64 goroutines (claim, run,
//     store);
//   - replay/NAME: calls on one completed key, 64 goroutines (the stored
//     result read back);
//   - contention64/NAME: one fresh key per iteration hit by 64 goroutines
//     at once, with Work inside fn; it reports dups/op, the executions
//     beyond the first per key (0 for a correct implementation).
func Benchmarks(b *testing.B, prefix string, impls ...Impl) {
	result := []byte(`{"ok":true}`)
	quick := func(context.Context) ([]byte, error) { return result, nil }
	for _, im := range impls {
		b.Run("first/"+im.Name, func(b *testing.B) {
			var n atomic.Int64
			base := NewKey(b)
			b.SetParallelism(Goroutines / max(1, runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					key := prefix + base + "/" + strconv.FormatInt(n.Add(1), 10)
					if _, _, err := im.Do(ctx, key, quick); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run("replay/"+im.Name, func(b *testing.B) {
			key := prefix + NewKey(b)
			ctx := context.Background()
			if _, _, err := im.Do(ctx, key, quick); err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(Goroutines / max(1, runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, err := im.Do(ctx, key, quick); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run("contention64/"+im.Name, func(b *testing.B) {
			base := NewKey(b)
			var dups int64
			for i := 0; b.Loop(); i++ {
				key := prefix + base + "/" + strconv.Itoa(i)
				st := Hammer(b, Goroutines, 1, Work, func(ctx context.Context, fn func(context.Context) ([]byte, error)) ([]byte, bool, error) {
					return im.Do(ctx, key, fn)
				})
				if st.Errors > 0 {
					b.Fatalf("%d calls failed: %v", st.Errors, st.FirstErr)
				}
				dups += st.Duplicates()
			}
			b.ReportMetric(float64(dups)/float64(b.N), "dups/op")
		})
	}
}

// WaitLatency measures how long a call waiting for a key that another call
// holds takes to return once the holder's work ends: per iteration, a
// holder runs work of a length spread over [50ms, 150ms) (so the waiter's
// polling phase varies), a waiter asks for the same key meanwhile, and the
// time from the end of the holder's work to the waiter's return is
// reported as wake-ms/op (mean) and wake-max-ms. It includes the holder's
// Complete and the waiter's final read. With polling alone it grows with
// the poll interval; with a Watcher backend it is a round trip or two.
func WaitLatency(b *testing.B, do func(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, bool, error)) {
	base := NewKey(b)
	var total, worst time.Duration
	n := 0
	for i := 0; b.Loop(); i++ {
		key := base + "/" + strconv.Itoa(i)
		work := 50*time.Millisecond + time.Duration(i*37%100)*time.Millisecond
		started := make(chan struct{})
		var ended time.Time
		holder := make(chan error, 1)
		go func() {
			_, _, err := do(context.Background(), key, func(context.Context) ([]byte, error) {
				close(started)
				time.Sleep(work)
				ended = time.Now()
				return []byte("done"), nil
			})
			holder <- err
		}()
		<-started
		res, replayed, err := do(context.Background(), key, func(context.Context) ([]byte, error) {
			return nil, errors.New("the waiter ran the work: the key was not held")
		})
		returned := time.Now()
		if herr := <-holder; herr != nil {
			b.Fatal(herr)
		}
		if err != nil || !replayed || string(res) != "done" {
			b.Fatalf("waiter: %q, replayed=%v, %v; want the holder's result", res, replayed, err)
		}
		d := returned.Sub(ended)
		total += d
		worst = max(worst, d)
		n++
	}
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(n), "wake-ms/op")
	b.ReportMetric(float64(worst.Microseconds())/1e3, "wake-max-ms")
}
