package runtime

import "testing"

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
