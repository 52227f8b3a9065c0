package benchtool

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// pairedBlock is the number of calls timed at once in BenchmarkInactivePaired.
const pairedBlock = 4096

// BenchmarkInactivePaired times the direct call and the inactive wrapper in
// alternating blocks of pairedBlock calls, so that a change of machine load
// hits both alike, and reports the median of the per-block differences as
// extra-ns/op (and each side's mean as direct-ns/op and wrapper-ns/op). Its
// own ns/op covers both sides and means nothing. On a shared machine this is
// the figure to trust for the inactive overhead.
func BenchmarkInactivePaired(b *testing.B) {
	s := NewStore()
	ctx := context.Background()
	var diffs []float64
	var direct, wrapper time.Duration
	direct1 := func(base int) time.Duration {
		t0 := time.Now()
		for i := 0; i < pairedBlock; i++ {
			_ = s.Put(ctx, keys[(base+i)&mask], i)
		}
		return time.Since(t0)
	}
	wrapped1 := func(base int) time.Duration {
		t0 := time.Now()
		for i := 0; i < pairedBlock; i++ {
			_ = s.PutTraced(ctx, keys[(base+i)&mask], i)
		}
		return time.Since(t0)
	}
	for n := 0; n < b.N; n += 2 * pairedBlock {
		var d, w time.Duration
		if len(diffs)%2 == 0 {
			d, w = direct1(n), wrapped1(n)
		} else {
			w, d = wrapped1(n), direct1(n)
		}
		direct += d
		wrapper += w
		diffs = append(diffs, float64(w-d)/pairedBlock)
	}
	sort.Float64s(diffs)
	blocks := float64(len(diffs) * pairedBlock)
	b.ReportMetric(diffs[len(diffs)/2], "extra-ns/op")
	b.ReportMetric(float64(direct)/blocks, "direct-ns/op")
	b.ReportMetric(float64(wrapper)/blocks, "wrapper-ns/op")
}

// BenchmarkActivePaired is BenchmarkInactivePaired inside runtime.RunTraced:
// each block of traced calls is timed next to a block of direct calls, in a
// fresh run (the trace of a run keeps every call), and the median per-block
// difference is reported as active-extra-ns/op.
func BenchmarkActivePaired(b *testing.B) {
	const block = 512
	s := NewStore()
	var diffs []float64
	for n := 0; n < b.N; n += 2 * block {
		var d, w time.Duration
		_, err := runtime.RunTraced(context.Background(), "bench", func(ctx context.Context) error {
			direct := func() {
				t0 := time.Now()
				for i := 0; i < block; i++ {
					_ = s.Put(ctx, keys[(n+i)&mask], i)
				}
				d = time.Since(t0)
			}
			traced := func() {
				t0 := time.Now()
				for i := 0; i < block; i++ {
					_ = s.PutTraced(ctx, keys[(n+i)&mask], i)
				}
				w = time.Since(t0)
			}
			if len(diffs)%2 == 0 {
				direct()
				traced()
			} else {
				traced()
				direct()
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		diffs = append(diffs, float64(w-d)/block)
	}
	sort.Float64s(diffs)
	b.ReportMetric(diffs[len(diffs)/2], "active-extra-ns/op")
}
