package idemtest

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
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
