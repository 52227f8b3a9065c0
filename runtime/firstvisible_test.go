package runtime

import "testing"

// A sibling's insert is not the first execution's effect: A (whose rows
// the baseline saw added) ran in parallel with B, which added a row; A's
// own row is not there yet (a worker writes it later). A's effect was not
// visible.
func TestFirstVisibleIgnoresASiblingsInsert(t *testing.T) {
	first := &Operation{Name: "a", Identity: `"k"`, Overlapped: true,
		more: judgedMore(&effectView{inCluster: true, before: `{}`, after: `{"b-1":"y"}`, clusterKeys: 2})}
	baseWin := map[string][2]string{"a\x00\"k\"\x00": {`{}`, `{"a-1":"x"}`}}
	if firstVisible(first, "a", `"k"`, baseWin) {
		t.Error("firstVisible: a sibling's new row taken for the first execution's effect")
	}
}

// The same under one top-level key (a State that returns {"db": ...}): the
// cluster changed the mail a sibling queued, not the order a changes.
// First's effect was not visible: it is compared place by place, not by
// the top-level key both changes sit under.
func TestFirstVisibleComparesNestedPlaces(t *testing.T) {
	first := &Operation{Name: "a", Identity: `"k"`, Overlapped: true,
		more: judgedMore(&effectView{inCluster: true, before: `{"db":{"mail":[],"orders":{"o1":"new"}}}`, after: `{"db":{"mail":["m1"],"orders":{"o1":"new"}}}`, clusterKeys: 2})}
	baseWin := map[string][2]string{"a\x00\"k\"\x00": {`{"db":{"mail":[],"orders":{"o1":"new"}}}`, `{"db":{"mail":[],"orders":{"o1":"paid"}}}`}}
	if firstVisible(first, "a", `"k"`, baseWin) {
		t.Error("firstVisible: a sibling's change under the same top-level key taken for the first execution's effect")
	}
	first.effect().after = `{"db":{"mail":["m1"],"orders":{"o1":"paid"}}}`
	if !firstVisible(first, "a", `"k"`, baseWin) {
		t.Error("firstVisible: the first execution's own change not seen")
	}
}
