package runtime

import "testing"

// TestCallIDsKeptAndBounded checks that the ids a suite keeps are those
// idLocked builds, for calls of two ops of one name, in any order, and
// that past maxKeptIDs they are still built right.
func TestCallIDsKeptAndBounded(t *testing.T) {
	a, b := &Op{Name: "T.Post"}, &Op{Name: "T.Post"}
	ids := &callIDs{}
	call := func(op *Op, n, k int) *Call {
		c := &Call{op: op, inv: &invocation{n: n}}
		c.rec.Occurrence = int32(k)
		return c
	}
	for round := 0; round < 2; round++ {
		for _, nk := range [][2]int{{1, 3}, {1, 1}, {2, 2}, {1, 2}, {3, 1}, {2, 1}} {
			for _, op := range []*Op{a, b} {
				c := call(op, nk[0], nk[1])
				if got, want := c.idIn(ids), c.idLocked(); got != want {
					t.Fatalf("round %d: idIn = %q, want %q", round, got, want)
				}
			}
		}
	}
	if got := call(a, 1, 0).idIn(ids); got != "" {
		t.Errorf("idIn of a call never numbered = %q, want \"\"", got)
	}
	for k := 1; k <= 2*maxKeptIDs; k += 97 {
		c := call(a, 1, k)
		if got, want := c.idIn(ids), c.idLocked(); got != want {
			t.Fatalf("idIn = %q, want %q", got, want)
		}
	}
	if ids.slots > maxKeptIDs {
		t.Errorf("%d slots kept, more than %d", ids.slots, maxKeptIDs)
	}
}
