package generic

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testdata/tracecheck"
)

type celsius float64

type doc string

func (d doc) Format(w io.Writer, verbose ...bool) error {
	_, err := io.WriteString(w, string(d))
	return err
}

type buffer struct{ strings.Builder }

func (*buffer) Flush() error { return nil }

func TestTrace(t *testing.T) {
	m := map[string]int{}
	box := NewBox[int, string]()
	tr, err := runtime.RunTraced(context.Background(), "generic", func(ctx context.Context) error {
		if s, err := SumTraced(ctx, 1, 2, 3); err != nil || s != 6 {
			t.Errorf("Sum = %d, %v", s, err)
		}
		if s, _ := SumTraced[celsius](ctx, 1.5, 2); s != 3.5 {
			t.Errorf("Sum = %v", s)
		}
		if err := SaveTraced(m, "k", 9); err != nil {
			return err
		}
		if l := LabelTraced(net.IPv4(10, 0, 0, 1)); l != "10.0.0.1" {
			t.Errorf("Label = %q", l)
		}
		if err := box.PutTraced(ctx, 1, "one"); err != nil {
			return err
		}
		if v, ok := box.GetTraced(1); !ok || v != "one" {
			t.Errorf("Get = %q, %v", v, ok)
		}
		if p := (Pair[int, string]{1, "a"}).SwapTraced(); p.First != "a" {
			t.Errorf("Swap = %v", p)
		}
		var out buffer
		if err := RenderTraced(doc("hello"), &out); err != nil || out.String() != "hello" {
			t.Errorf("Render = %q, %v", out.String(), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if m["k"] != 9 {
		t.Errorf("Save did not run: %v", m)
	}
	tracecheck.Expect(t, tr,
		`Sum read args={"xs":[1,2,3]} identity= entity= success/received result=6`,
		`Sum read args={"xs":[1.5,2]} identity= entity= success/received result=3.5`,
		`Save write args={"m":{},"key":"k","v":9} identity="k" entity="k" success/received result=null`, // m as it was when the call began
		`Label read args={"s":"10.0.0.1"} identity= entity= success/received result="10.0.0.1"`,
		`Box.Put write args={"k":1,"v":"one"} identity=1 entity=1 success/received result=null`,
		`Box.Get read args={"k":1} identity= entity= success/received result=["one",true]`,
		`Pair.Swap read args={} identity= entity= success/received result={"First":"a","Second":1}`,
		`Render read args={"v":"hello","out":{}} identity= entity= success/received result=null`,
	)
}
