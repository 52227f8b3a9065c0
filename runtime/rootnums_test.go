package runtime

import (
	"maps"
	"testing"
)

// TestRootNumsAsAMap holds world.roots, kept inline up to rootsInline and
// in a map past them, to what the map it replaced gave.
func TestRootNumsAsAMap(t *testing.T) {
	var m rootNums
	want := map[uint64]int{}
	for i, gid := range []uint64{7, 3, 7, 9, 11, 3, 12, 9, 40} {
		m.set(gid, i)
		want[gid] = i
		for g := range uint64(42) {
			n, ok := m.get(g)
			if wn, wok := want[g]; n != wn || ok != wok {
				t.Fatalf("after %d sets, get(%d) = %d, %v; want %d, %v", i+1, g, n, ok, wn, wok)
			}
		}
		got := map[uint64]int{}
		for g := range m.all {
			got[g] = want[g]
		}
		if !maps.Equal(got, want) || m.n != len(want) {
			t.Fatalf("after %d sets, all = %v (n %d); want %v", i+1, got, m.n, want)
		}
	}
}
