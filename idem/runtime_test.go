package idem_test

import (
	"context"
	"testing"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
)

var opRefund = &runtime.Op{Name: "refund", Kind: runtime.KindWrite}

// refundTraced is what agentidem-gen writes around a refund tool; the tool
// either goes through idem or, for the control, straight to the effect.
func refundTraced(ctx context.Context, store *idem.Store, orderID string, effects *int) (Receipt, error) {
	call, cctx := runtime.Begin(ctx, opRefund, []any{orderID}, []any{orderID}, nil)
	if err := call.Start(); err != nil {
		return Receipt{}, err
	}
	tool := func(ctx context.Context) (Receipt, error) {
		*effects++
		return Receipt{RefundID: "re_1", Cents: 500}, nil
	}
	var r Receipt
	var err error
	if store != nil {
		r, _, err = idem.Do(cctx, store, idem.Key("refund", orderID), 500, tool)
	} else {
		r, err = tool(cctx)
	}
	if ferr := call.Finish(err, r); ferr != nil {
		return Receipt{}, ferr
	}
	return r, err
}

// TestReplayMarksTrace checks that a replay by Do reaches the trace: the
// second refund of an order is recorded replayed, so it is not an effect and
// not a duplicate. The control without idem shows two effective writes.
func TestReplayMarksTrace(t *testing.T) {
	for _, c := range []struct {
		name          string
		store         *idem.Store
		wantEffective int
		wantReplayed  []bool
	}{
		{"WithIdem", idem.NewMemory(), 1, []bool{false, true}},
		{"ControlWithoutIdem", nil, 2, []bool{false, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			effects := 0
			tr, err := runtime.RunTraced(context.Background(), "agent", func(ctx context.Context) error {
				for i := 0; i < 2; i++ { // the agent retries the refund
					if _, err := refundTraced(ctx, c.store, "order-42", &effects); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Ops) != 2 {
				t.Fatalf("trace has %d ops, want 2", len(tr.Ops))
			}
			effective := 0
			for i, op := range tr.Ops {
				if op.Replayed != c.wantReplayed[i] {
					t.Errorf("op %d (%s) Replayed = %v, want %v", i, op.Name, op.Replayed, c.wantReplayed[i])
				}
				if op.Effective() {
					effective++
				}
			}
			if effective != c.wantEffective || effects != c.wantEffective {
				t.Errorf("effective writes in trace = %d, real effects = %d; want %d", effective, effects, c.wantEffective)
			}
		})
	}
}

// TestMarkReplayedOutsideRun checks Do's replay is harmless without a run.
func TestMarkReplayedOutsideRun(t *testing.T) {
	s := idem.NewMemory()
	for i := 0; i < 2; i++ {
		if _, _, err := idem.Do(context.Background(), s, "k", nil, func(context.Context) (int, error) { return 1, nil }); err != nil {
			t.Fatal(err)
		}
	}
}
