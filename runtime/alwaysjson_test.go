package runtime

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

type ajPayment struct {
	ID       string            `json:"id"`
	Cents    int64             `json:"cents"`
	Refunded bool              `json:"refunded"`
	Tags     []string          `json:"tags"`
	Meta     map[string]uint16 `json:"meta"`
	internal float64           // never encoded
}

type ajEmbedded struct {
	ajPayment
	Note string
}

type ajTree struct {
	Name     string
	Children []ajTree
}

type ajText int

func (ajText) MarshalText() ([]byte, error) { return nil, nil }

type ajFailing struct{}

func (*ajFailing) MarshalJSON() ([]byte, error) { return nil, json.Unmarshal([]byte("{"), new(any)) }

// alwaysJSON says "always" only of types no value of which encoding/json
// refuses: floats, interfaces, pointers, methods of their own and types
// that refer to themselves are left to an encoding of the value.
func TestAlwaysJSONByType(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{"s", true}, {int8(1), true}, {uint64(1), true}, {true, true},
		{[]string{"a"}, true}, {[3]int{}, true}, {map[string]int{}, true}, {map[int]string{}, true},
		{ajPayment{}, true}, {ajEmbedded{}, true}, {[]ajPayment{}, true}, {map[string][]ajPayment{}, true},
		{1.5, false}, {float32(1), false}, {[]float64{}, false}, {struct{ A any }{}, false},
		{&ajPayment{}, false}, {map[ajText]int{}, false}, {ajText(1), false}, {ajFailing{}, false},
		{ajTree{}, false}, {time.Time{}, false}, {make(chan int), false}, {func() {}, false},
		{map[[2]int]string{}, false}, {complex(1, 2), false}, {struct{ F float64 }{}, false},
	} {
		if got := alwaysJSON(reflect.TypeOf(c.v)); got != c.want {
			t.Errorf("alwaysJSON(%T) = %v, want %v", c.v, got, c.want)
		}
	}
}

// encodable passes a value of a type always encodable untouched, and still
// names the type of one that JSON refuses.
func TestEncodableWithTheTypeCache(t *testing.T) {
	p := ajPayment{ID: "re_1", Cents: 500, Tags: []string{"x"}}
	if got := encodable(p); !reflect.DeepEqual(got, p) {
		t.Errorf("encodable(payment) = %#v", got)
	}
	for _, v := range []any{math.NaN(), struct{ F float64 }{math.Inf(1)}, struct{ C any }{make(chan int)}, &ajFailing{}} {
		s, ok := encodable(v).(string)
		if !ok || !strings.Contains(s, "not JSON") {
			t.Errorf("encodable(%T) = %#v, want a note that it is not JSON", v, encodable(v))
		}
	}
	// A type that refers to itself may be cyclic: its values are encoded.
	a := make([]ajTree, 1)
	a[0].Children = a
	if s, ok := encodable(a[0]).(string); !ok || !strings.Contains(s, "not JSON") {
		t.Errorf("encodable(cyclic tree) = %T, want a note that it is not JSON", encodable(a[0]))
	}
}
