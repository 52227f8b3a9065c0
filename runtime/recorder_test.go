package runtime

import (
	"fmt"
	"testing"
)

func TestSpareCallsAreHandedOutOnce(t *testing.T) {
	r1 := newRecorder("spare", Fault{}, nil)
	first := r1.newCall() // makes a block of 2: one is left
	sp := r1.takeSpare()
	if len(sp.block) != 1 {
		t.Fatalf("takeSpare = %+v, want the one Call left of a block of 2", sp)
	}
	r2 := newRecorder("spare", Fault{}, nil)
	r2.useSpare(sp)
	got := r2.newCall()
	if got != &sp.block[0] {
		t.Errorf("the next recorder made a block instead of using the spare Call")
	}
	// The first recorder still records (a goroutine its agent left behind):
	// it must not hand out the Call it gave away.
	late := r1.newCall()
	if late == got || late == first {
		t.Errorf("a Call was handed out twice")
	}
	if len(r2.takeSpare().block) != 0 {
		t.Errorf("a recorder that used its whole spare block has nothing to hand on")
	}
}

// A run counts the calls of each op name, past the sixteen names it finds
// by a scan as below them; two ops of one name share the count.
func TestOccurrencesOfManyOps(t *testing.T) {
	r := newRecorder("many", Fault{Kind: FaultLostAck, Op: "op17", Occurrence: 2}, nil)
	var seq int32
	for round := int32(1); round <= 2; round++ {
		for i := range 20 {
			op := &Op{Name: fmt.Sprintf("op%d", i)}
			k, s, planned := r.nextNumber(op)
			if k != round || s != seq {
				t.Errorf("round %d, %s: occurrence %d, seq %d; want %d, %d", round, op.Name, k, s, round, seq)
			}
			if want := op.Name == "op17" && round == 2; planned != want {
				t.Errorf("round %d, %s: planned %v, want %v", round, op.Name, planned, want)
			}
			seq++
		}
	}
	if k, _, _ := r.nextNumber(&Op{Name: "op3"}); k != 3 {
		t.Errorf("another Op named op3 got occurrence %d, want 3", k)
	}
}
