package benchtool

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// TestWrapperAllocs pins the allocations of a call of the generated wrapper
// (allocation counts are deterministic, unlike timings): none with no run
// active, and none inside a run either (the target is at most 3): its
// string and int go to the runtime unboxed (BeginArgs), where boxing them
// into a []any for Begin was 2. The value v is above 255 so that boxing
// it would allocate, as it does for most ints.
func TestWrapperAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts in -short mode are not pinned")
	}
	s := NewStore()
	ctx := context.Background()
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		i++
		_ = s.PutTraced(ctx, keys[i&mask], 1000+i)
	}); n != 0 {
		t.Errorf("inactive wrapper: %v allocations per call, want 0", n)
	}
	var active float64
	_, err := runtime.RunTraced(ctx, "allocs", func(ctx context.Context) error {
		active = testing.AllocsPerRun(1000, func() {
			i++
			_ = s.PutTraced(ctx, keys[i&mask], 1000+i)
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if active > 0 {
		t.Errorf("active wrapper: %v allocations per call, want 0", active)
	}
}

// TestIdentitiesKept checks that the identities recorded without an
// allocation of their own (they share the call's bytes) are still right
// once the run is over: short, long and escaped keys, many calls.
func TestIdentitiesKept(t *testing.T) {
	s := NewStore()
	var want []string
	tr, err := runtime.RunTraced(context.Background(), "ids", func(ctx context.Context) error {
		for i := range 300 {
			key := keys[i&mask]
			switch i % 3 {
			case 1:
				key = strings.Repeat(key, 12) // longer than the call's buffer
			case 2:
				key = key + `"<&>` + "\n"
			}
			id, err := runtime.Canonical(key)
			if err != nil {
				return err
			}
			want = append(want, id)
			if err := s.PutTraced(ctx, key, i); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Ops) != len(want) {
		t.Fatalf("recorded %d calls, want %d", len(tr.Ops), len(want))
	}
	for i, op := range tr.Ops {
		if op.Identity != want[i] || op.Entity != want[i] {
			t.Errorf("call %d: identity %q, entity %q, want %q", i, op.Identity, op.Entity, want[i])
		}
		if op.Args.Values[1] != i {
			t.Errorf("call %d: argument v = %v, want %d", i, op.Args.Values[1], i)
		}
	}
}

// TestPointerArgumentAllocs pins what recording a pointer argument adds to
// a traced call: its JSON, taken when the call begins, and the boxing of
// that JSON: 2 (the key goes unboxed, BeginArgs). The request is reused,
// and each call keeps the value it was given.
func TestPointerArgumentAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts in -short mode are not pinned")
	}
	s := NewStore()
	req := &Req{}
	i := 0
	var active float64
	tr, err := runtime.RunTraced(context.Background(), "allocs", func(ctx context.Context) error {
		active = testing.AllocsPerRun(100, func() {
			i++
			req.V = 1000 + i
			_ = s.PutReqTraced(ctx, keys[i&mask], req)
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if active > 2 && !raceEnabled { // json.Marshal's pooled buffer (race_test.go)
		t.Errorf("active wrapper with a pointer argument: %v allocations per call, want at most 2", active)
	}
	for k, op := range tr.Ops {
		// AllocsPerRun calls the function once more than it counts.
		want := fmt.Sprintf(`{"key":%q,"req":{"V":%d}}`, keys[(k+1)&mask], 1001+k)
		if got, _ := op.Args.MarshalJSON(); string(got) != want {
			t.Fatalf("call %d: arguments %s, want %s", k, got, want)
		}
	}
}
