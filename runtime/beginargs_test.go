package runtime

import (
	"context"
	"reflect"
	"testing"
)

type (
	skuID   string
	cents   int64
	percent float32
	flag    bool
)

// TestBeginArgsRecordsAsBegin checks that the arguments BeginArgs records
// unboxed are the values, of the same dynamic types, that Begin records
// from the wrapper's []any, and that the identity and the entity are the
// same: strings and numbers of named types, more of them than the call
// keeps itself, more arguments than its buffer holds, and a pointer that
// changes after the call began.
func TestBeginArgsRecordsAsBegin(t *testing.T) {
	type req struct{ N int }
	cases := []struct {
		name   string
		vals   []any
		args   func(r *req) []Arg
		id, en ArgSpan
	}{
		{"scalars", []any{"a", 1000, int8(-3), uint16(60000), 2.5, true},
			func(*req) []Arg {
				return []Arg{Str("a"), Num(1000), Num(int8(-3)), Num(uint16(60000)), Num(2.5), Num(true)}
			}, Span(0, 2), Span(1, 2)},
		{"named", []any{skuID("sku-1"), cents(-1 << 40), percent(0.5), flag(true)},
			func(*req) []Arg {
				return []Arg{Str(skuID("sku-1")), Num(cents(-1 << 40)), Num(percent(0.5)), Num(flag(true))}
			}, Span(0, 2), ArgSpan{}},
		{"three strings", []any{"x", "y", "z"},
			func(*req) []Arg { return []Arg{Str("x"), Str("y"), Str("z")} }, Span(1, 3), ArgSpan{}},
		{"pointer in identity", nil,
			func(r *req) []Arg { return []Arg{Str("k"), Val(r)} }, Span(0, 2), Span(1, 2)},
		{"none", []any{}, func(*req) []Arg { return nil }, ArgSpan{}, ArgSpan{}},
	}
	op := &Op{Name: "put", Kind: KindWrite, Params: []string{"a", "b", "c", "d", "e", "f"}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &req{N: 1}
			vals := tc.vals
			if vals == nil {
				vals = []any{"k", r}
			}
			tr, err := RunTraced(context.Background(), "args", func(ctx context.Context) error {
				c, _ := Begin(ctx, op, vals, tc.id.of(vals), tc.en.of(vals))
				_ = c.Finish(nil)
				c, _ = BeginArgs(ctx, op, tc.args(r), tc.id, tc.en)
				r.N = 2 // after the call began: not in its record
				_ = c.Finish(nil)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want, got := tr.Ops[0], tr.Ops[1]
			if len(got.Args.Values) != len(want.Args.Values) {
				t.Fatalf("BeginArgs recorded %d values, Begin %d", len(got.Args.Values), len(want.Args.Values))
			}
			for i, v := range got.Args.Values {
				if reflect.TypeOf(v) != reflect.TypeOf(want.Args.Values[i]) || !reflect.DeepEqual(v, want.Args.Values[i]) {
					t.Errorf("value %d: BeginArgs recorded %#v (%T), Begin %#v (%T)", i, v, v, want.Args.Values[i], want.Args.Values[i])
				}
			}
			if got.Identity != want.Identity || got.Entity != want.Entity {
				t.Errorf("BeginArgs: identity %q, entity %q; Begin: %q, %q", got.Identity, got.Entity, want.Identity, want.Entity)
			}
			gj, _ := got.Args.MarshalJSON()
			wj, _ := want.Args.MarshalJSON()
			if string(gj) != string(wj) {
				t.Errorf("BeginArgs recorded %s, Begin %s", gj, wj)
			}
		})
	}
}

// TestArgsAllocateNothing checks that making the Args of strings and
// numbers allocates nothing: their type is taken from a zero value.
func TestArgsAllocateNothing(t *testing.T) {
	s, n := "key-1", 1000
	if a := testing.AllocsPerRun(100, func() {
		args := []Arg{Str(s), Num(n), Str(skuID(s)), Num(cents(n)), Num(2.5), Num(true)}
		_ = args
	}); a != 0 {
		t.Errorf("%v allocations, want 0", a)
	}
}

// TestBeginArgsOutsideRun checks that BeginArgs with no run to record the
// call (an observer's, here none) hands the tool its context.
func TestBeginArgsOutsideRun(t *testing.T) {
	ctx := context.Background()
	c, cctx := BeginArgs(ctx, &Op{Name: "get", Kind: KindRead}, []Arg{Str("a"), Num(1)}, ArgSpan{}, ArgSpan{})
	if c.Active() || cctx != ctx {
		t.Errorf("outside a run: active %v, context %v", c.Active(), cctx)
	}
}

// TestBeginArgsObservedAllocs checks that a call an observer sees, outside
// any run, allocates through BeginArgs no more than through Begin with
// the wrapper's []any: the boxing of its string and its number.
func TestBeginArgsObservedAllocs(t *testing.T) {
	defer SetObserver(nopObserver{}, []byte("k"))()
	op := &Op{Name: "put", Kind: KindWrite, Params: []string{"key", "v"}}
	ctx := context.Background()
	keys := []string{"key-1", "key-2"}
	i := 0
	viaBegin := fewestAllocs(func() {
		i++
		key, v := keys[i%2], 1000+i
		args := []any{key, v}
		c, _ := Begin(ctx, op, args, args[0:1:1], nil)
		_ = c.Finish(nil)
	})
	viaArgs := fewestAllocs(func() {
		i++
		key, v := keys[i%2], 1000+i
		c, _ := BeginArgs(ctx, op, []Arg{Str(key), Num(v)}, Span(0, 1), ArgSpan{})
		_ = c.Finish(nil)
	})
	if viaArgs > viaBegin {
		t.Errorf("observed call: %v allocations through BeginArgs, %v through Begin", viaArgs, viaBegin)
	}
}

// fewestAllocs is the fewest allocations one run of fn made, of fifty.
// Under -race sync.Pool drops a share of what is put back, on purpose, and
// the average of many runs then read 7 or 8 through BeginArgs against 6
// through Begin, as the pool happened to drop; a run where it dropped
// nothing shows what the call itself allocates.
func fewestAllocs(fn func()) float64 {
	fewest := testing.AllocsPerRun(1, fn)
	for range 49 {
		fewest = min(fewest, testing.AllocsPerRun(1, fn))
	}
	return fewest
}

type nopObserver struct{}

func (nopObserver) StartCall(ctx context.Context, _ *ObservedCall) context.Context { return ctx }
func (nopObserver) EndCall(context.Context, *ObservedCall)                         {}
