package hostile

import (
	stdctx "context"
	neturl "net/url"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testdata/tracecheck"
)

func TestTrace(t *testing.T) {
	var shipErr error
	tr, err := runtime.RunTraced(stdctx.Background(), "hostile", func(ctx stdctx.Context) error {
		if err := AnyTraced(ctx, "a"); err != nil {
			return err
		}
		if _, err := NilTraced(3); err == nil || err.Error() != "ctx" {
			t.Errorf("Nil: %v", err)
		}
		if err := (&Box[int]{}).PutTraced("k"); err != nil {
			return err
		}
		if err := (A{}).XTraced("m"); err != nil {
			return err
		}
		if err := A_XTraced("f"); err != nil {
			return err
		}
		u, _ := neturl.Parse("https://h.test/x")
		if h, err := TypedTraced(u, 1); err != nil || h != "h.test" {
			t.Errorf("Typed = %q, %v", h, err)
		}
		if err := UnnamedTraced("s", 1); err != nil {
			return err
		}
		if err := LiteralTraced("z"); err != nil {
			return err
		}
		shipErr = ShipTraced(nil)
		return SiteTraced("/p")
	})
	if err != nil {
		t.Fatal(err)
	}
	// The tool ran, as in production, and its own error reached the agent.
	if shipErr == nil || shipErr.Error() != "ship: no order" {
		t.Errorf("Ship(nil) = %v, want the tool's own error", shipErr)
	}
	tracecheck.Expect(t, tr,
		`Any write args={"any":"a"} identity="a" entity="a" success/received result=null`,
		`Nil write args={"nil":3} identity=3 entity=3 failed/failed result=3 error=ctx`,
		`Box.Put write args={"k":"k"} identity="k" entity="k" success/received result=null`,
		`A.X write args={"id":"m"} identity="m" entity="m" success/received result=null`,
		`A_X write args={"id":"f"} identity="f" entity="f" success/received result=null`,
		`Typed read args={"u":{"Scheme":"https","Opaque":"","User":null,"Host":"h.test","Path":"/x","Fragment":"","RawQuery":"","RawPath":"","RawFragment":"","ForceQuery":false,"OmitHost":false},"v":1} identity= entity="h.test" success/received result="h.test"`,
		`Unnamed write args={"p0":"s","p1_":1} identity="pkg-p1" entity="pkg-p1" success/received result=null`,
		`Literal write args={"s":"z"} identity="agentidemQual0_z" entity="agentidemQual0_z" success/received result=null`,
		`Ship write args={"o":null} identity= entity= failed/failed result=null error=ship: no order`,
		`Site write args={"path":"/p"} identity="https://shop.test/p" entity="https://shop.test/p" success/received result=null`,
	)
	ship := tr.Calls("Ship")[0]
	if len(ship.IdentityPanic) != 1 || !strings.HasPrefix(ship.IdentityPanic[0], "identity=o.ID panicked: runtime error: invalid memory address or nil pointer dereference") {
		t.Errorf("Ship's identity panic = %q", ship.IdentityPanic)
	}
}
