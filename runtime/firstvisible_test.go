package runtime

import "testing"

// A sibling's insert is not the first execution's effect: A (whose rows
// the baseline saw added) ran in parallel with B, which added a row; A's
// own row is not there yet (a worker writes it later). A's effect was not
// visible.
func TestFirstVisibleIgnoresASiblingsInsert(t *testing.T) {
	first := &Operation{Name: "a", Identity: `"k"`, Overlapped: true,
		effect: &effectView{inCluster: true, before: `{}`, after: `{"b-1":"y"}`, clusterKeys: 2}}
	baseWin := map[string][2]string{"a\x00\"k\"\x00": {`{}`, `{"a-1":"x"}`}}
	if firstVisible(first, "a", `"k"`, baseWin) {
		t.Error("firstVisible: a sibling's new row taken for the first execution's effect")
	}
}
