package params

import (
	"context"
	neturl "net/url"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testdata/tracecheck"
)

func TestTrace(t *testing.T) {
	var h Handler
	tr, err := runtime.RunTraced(context.Background(), "params", func(ctx context.Context) error {
		if _, err := unnamedTraced(ctx, "s", 1); err != nil {
			return err
		}
		if err := blankTraced(ctx, "id", 2, "x", "y"); err != nil {
			return err
		}
		r, err := clashTraced(ctx, "c", 1, "e", true, "r", "v", 7)
		if err != nil || r != "cerv" {
			t.Errorf("clash = %q, %v", r, err)
		}
		if n, err := h.HandleTraced(ctx, "abc", 3); err != nil || n != 3 {
			t.Errorf("Handle = %d, %v", n, err)
		}
		if err := h.recvTraced(ctx, 4); err != nil {
			return err
		}
		if err := shadowTraced("s", 5, true); err != nil {
			return err
		}
		if err := h.ServeTraced(6); err != nil {
			return err
		}
		base, _ := neturl.Parse("https://x.test")
		a, u, err := saveTraced(ctx, Account{ID: "a1"}, "p q", base)
		if err != nil || a.ID != "a1" || u != base {
			t.Errorf("save = %v, %v, %v", a, u, err)
		}
		n, err := runtimeNamedTraced("four")
		if err != nil || n != 4 {
			t.Errorf("runtimeNamed = %d, %v", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	baseJSON := `{"Scheme":"https","Opaque":"","User":null,"Host":"x.test","Path":"","Fragment":"","RawQuery":"","RawPath":"","RawFragment":"","ForceQuery":false,"OmitHost":false}`
	tracecheck.Expect(t, tr,
		`unnamed read args={"p1":"s","p2":1} identity= entity= success/received result=""`,
		`blank write args={"id":"id","p2":2,"p3":["x","y"]} identity="id" entity="id" success/received result=null`,
		`clash write args={"aiCall":"c","aiCtx":1,"aiErr":"e","aiLost":true,"aiR0":"r","aiV0":"v","aiArgs":7} identity=["c",1,"e",true,"r","v",8] entity=["c",1,"e",true,"r","v",8] success/received result="cerv"`,
		`Handler.Handle write args={"p1":"abc","p2":3} identity="abc" entity="abc" success/received result=3`,
		`Handler.recv read args={"recv":4} identity= entity= success/received result=null`,
		`shadow write args={"p0_":"s","p0":5,"p2":true} identity=5 entity=5 success/received result=null`,
		`Handler.Serve write args={"recv":6} identity=6 entity=6 success/received result=null`,
		`save write args={"Account":{"ID":"a1"},"url":"p q","base":`+baseJSON+`} identity=["p%20q","a1"] entity=["p%20q","a1"] success/received result=[{"ID":"a1"},`+baseJSON+`]`,
		`runtimeNamed read args={"agentidemrt":"four"} identity= entity= success/received result=4`,
	)
}
