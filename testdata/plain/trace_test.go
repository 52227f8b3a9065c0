package plain

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testdata/tracecheck"
)

func TestTrace(t *testing.T) {
	Store = map[string]int{}
	tr, err := runtime.RunTraced(context.Background(), "plain", func(ctx context.Context) error {
		if err := putTraced(ctx, "a", 1); err != nil {
			return err
		}
		if n, err := getTraced(ctx, "a"); err != nil || n != 1 {
			return fmt.Errorf("get: %d, %v", n, err)
		}
		bumpTraced("a")
		if err := putAllTraced(ctx, 7, "b", "c"); err != nil {
			return err
		}
		if n := countTraced(); n != 3 {
			return fmt.Errorf("count: %d", n)
		}
		if x, y := pairTraced("l", "r"); x != "r" || y != "l" {
			return fmt.Errorf("pair: %s %s", x, y)
		}
		n, total, _, err := statsTraced(ctx, "")
		if err != nil || n != 3 || total != 16 {
			return fmt.Errorf("stats: %d %d %v", n, total, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if Store["a"] != 2 {
		t.Errorf("the wrappers did not call the tools: a=%d", Store["a"])
	}
	tracecheck.Expect(t, tr,
		`put write args={"id":"a","n":1} identity="a" entity="a" success/received result=null`,
		`get read args={"id":"a"} identity= entity= success/received result=1`,
		`bump write args={"id":"a"} identity="a" entity="a" success/received result=null`,
		`putAll write args={"n":7,"ids":["b","c"]} identity=["b","c"] entity=["b","c"] success/received result=null`,
		`count read args={} identity= entity= success/received result=3`,
		`pair read args={"a":"l","b":"r"} identity= entity= success/received result=["r","l"]`,
		`stats read args={"prefix":""} identity= entity= success/received result=[3,16,["a","b","c"]]`,
	)
}
