package runtime

import (
	"testing"
	"time"
)

func TestArgumentsThatCannotChangeAreRecordedAsPassed(t *testing.T) {
	type plain struct {
		A string
		B [2]int
	}
	type holding struct {
		A string
		P *int
	}
	n := 1
	for _, c := range []struct {
		v    any
		want bool
	}{
		{"s", false}, {3, false}, {2.5, false}, {true, false}, {nil, false}, {Redacted, false},
		{plain{"a", [2]int{1, 2}}, false},
		{time.Now(), false}, {time.Second, false},
		{(*priceReq)(nil), false}, {map[string]int(nil), false}, {[]string(nil), false},
		{make(chan int), false}, {func() {}, false},
		{&n, true}, {[]string{"a"}, true}, {map[string]int{}, true}, {holding{"a", nil}, true}, {[1]any{1}, true},
	} {
		if got := mayChange(c.v); got != c.want {
			t.Errorf("mayChange(%T) = %v, want %v", c.v, got, c.want)
		}
	}
}
