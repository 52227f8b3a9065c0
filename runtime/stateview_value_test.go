package runtime

import "testing"

// stateView.value is nil exactly where at says "null", at every prefix of
// every place a change made: member asks value, not at, whether a key, a
// row or an object came or went, and must answer as it did.
func TestStateViewValueIsNilWhereAtIsNull(t *testing.T) {
	snaps := []string{
		`{"inbox":[{"id":1,"read":false},{"id":2,"read":false}],"note":null,"user":{"name":"a"}}`,
		`{"inbox":[{"id":1,"read":true},{"id":3,"read":false}],"user":{"name":"a","tags":["x"]},"cart":[[1,"c1","sku"],[2,"c1","sku2"]]}`,
		`{"inbox":[{"id":1,"read":true,"label":null}],"note":"n","user":null,"cart":[[2,"c1","sku2"],[3,"c1","sku3"]]}`,
		`{"inbox":[],"list":["a","a","b"]}`,
	}
	members := 0
	for _, a := range snaps {
		for _, b := range snaps {
			av, bv := viewOf(a), viewOf(b)
			places, ok := changedPlaces(av, bv)
			if !ok {
				t.Fatalf("%s → %s did not decode", a, b)
			}
			for _, p := range places {
				for i := 1; i <= len(p.path); i++ {
					q := place{path: p.path[:i]}
					for _, v := range []*stateView{av, bv} {
						if (v.value(q.path) == nil) != (v.at(q) == "null") {
							t.Errorf("%q in %s: value %v, at %s", q.path, a, v.value(q.path), v.at(q))
						}
					}
				}
				if _, _, _, ok := member(p, av, bv); ok {
					members++
				}
			}
		}
	}
	if members == 0 {
		t.Fatal("no member added or removed: the snapshots test nothing of member")
	}
}
