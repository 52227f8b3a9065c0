package toolspec

import (
	"encoding/json"
	"testing"
)

func identityOf(t *testing.T, raw string) string {
	t.Helper()
	tool := Compile(Tools{"refund": Write(Identity("order_id"))}, "test").Lookup("refund")
	_, id, _ := tool.Values(json.RawMessage(raw))
	b, _ := json.Marshal(id)
	return string(b)
}

// 2^60 is a float64 exactly, so it stays a float64, which encodes as the
// shortest decimal that rounds to it: 1152921504606847000, another id's
// digits, which stay a json.Number.
func TestExactBigFloatDoesNotCollide(t *testing.T) {
	a := identityOf(t, `{"order_id":1152921504606846976}`)
	b := identityOf(t, `{"order_id":1152921504606847000}`)
	if a == b {
		t.Errorf("ids 1152921504606846976 and 1152921504606847000 share the identity %s", a)
	}
}

// One id, written with a fraction or an exponent by a model: one identity.
func TestOneBigIDTwoSpellings(t *testing.T) {
	a := identityOf(t, `{"order_id":1234567890123456789}`)
	for _, s := range []string{"1234567890123456789.0", "1.234567890123456789e18"} {
		if b := identityOf(t, `{"order_id":`+s+`}`); a != b {
			t.Errorf("id %s has identity %s, as 1234567890123456789 %s", s, b, a)
		}
	}
}
