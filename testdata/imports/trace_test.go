package imports

import (
	"context"
	"net/url"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testdata/tracecheck"
)

func TestTrace(t *testing.T) {
	tr, err := runtime.RunTraced(context.Background(), "imports", func(ctx context.Context) error {
		if _, err := PlaceTraced(ctx, Order{Customer: "ACME", Lines: []string{"a", "b"}}); err != nil {
			return err
		}
		u, _ := url.Parse("https://example.com/x/y")
		if _, err := FetchTraced(ctx, u); err != nil {
			return err
		}
		if err := TagTraced(" t "); err != nil {
			return err
		}
		return NormalizeTraced(ctx, "Ann")
	})
	if err != nil {
		t.Fatal(err)
	}
	tracecheck.Expect(t, tr,
		`Place write args={"o":{"Customer":"ACME","Lines":["a","b"]}} identity=["acme","a+b"] entity="orders/ACME" success/received result="ACME"`,
		`Fetch read args={"u":{"Scheme":"https","Opaque":"","User":null,"Host":"example.com","Path":"/x/y","Fragment":"","RawQuery":"","RawPath":"","RawFragment":"","ForceQuery":false,"OmitHost":false}} identity= entity="example.com" success/received result="eQ=="`,
		`Tag write args={"name":" t "} identity=["t","a%20b"] entity=["t","a%20b"] success/received result=null`,
		`Normalize write args={"name":"Ann"} identity=["ann",97,1114111] entity=["ann",97,1114111] success/received result=null`,
	)
}
