package toolspec

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A dotted name is a path into nested objects; a top-level key spelt with
// the dot comes first, so a spec that named such a key before keeps its
// meaning.
func TestIdentityPath(t *testing.T) {
	set := Compile(Tools{
		"create_customer": Write(Identity("customer.email"), Entity("customer.address.city")),
		"dotted_key":      Write(Identity("customer.email")),
		"secret":          Write(Identity("card.number"), Redact("card")),
	}, "test")
	c := set.Lookup("create_customer")

	_, id, ent, missing := c.ValuesOf(json.RawMessage(`{"customer":{"email":"a@x.io","name":"Ann","address":{"city":"Oslo"}}}`))
	assert.Equal(t, []any{"a@x.io"}, id)
	assert.Equal(t, []any{"Oslo"}, ent)
	assert.Empty(t, missing)

	_, id, _, missing = c.ValuesOf(json.RawMessage(`{"customer.email":"top@x.io","customer":{"email":"a@x.io"}}`))
	assert.Equal(t, []any{"top@x.io"}, id, "an exact top-level key wins over the path")
	assert.Empty(t, missing)

	for _, raw := range []string{
		`{"customer":{"name":"Ann"}}`,
		`{"customer":{"email":null}}`,
		`{"customer":"a@x.io"}`,
		`{"customer":[{"email":"a@x.io"}]}`,
		`{}`,
	} {
		_, id, _, missing = c.ValuesOf(json.RawMessage(raw))
		assert.Equal(t, []any{nil}, id, raw)
		assert.Equal(t, []string{"customer.email"}, missing, raw)
	}

	_, id, _, missing = set.Lookup("dotted_key").ValuesOf(json.RawMessage(`{"customer.email":"a@x.io"}`))
	assert.Equal(t, []any{"a@x.io"}, id)
	assert.Empty(t, missing)

	assert.True(t, set.Lookup("secret").Op.RedactIdentity, "a path into a redacted argument is a secret: digest it")
	assert.False(t, c.Op.RedactIdentity)
}
