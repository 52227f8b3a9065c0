package toolspec

import (
	"encoding/json"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompileAndValues(t *testing.T) {
	set := Compile(Tools{
		"get_payment": Read(Entity("payment_id")),
		"refund":      Write(Identity("payment_id"), Redact("card"), After("get_payment")),
		"charge":      Write(Redact("card")), // identity: the whole arguments
		"tag":         Write(IdentityFunc(func(m map[string]any) any { return m["a"].(string) + "/" + m["b"].(string) }), Name("tagIt")),
	}, "test")
	assert.Nil(t, set.Lookup("unknown"))

	refund := set.Lookup("refund")
	require.NotNil(t, refund)
	assert.Equal(t, "refund", refund.Op.Name)
	assert.Equal(t, runtime.KindWrite, refund.Op.Kind)
	assert.Equal(t, []string{"get_payment"}, refund.Op.After)
	assert.Equal(t, "test tool refund", refund.Op.Pos)
	assert.False(t, refund.Op.RedactIdentity, "the identity does not use the redacted card")
	args, id, ent := refund.Values(json.RawMessage(`{"payment_id":"p1","card":"4242"}`))
	assert.Equal(t, []any{map[string]any{"payment_id": "p1", "card": runtime.Redacted}}, args)
	assert.Equal(t, []any{"p1"}, id)
	assert.Nil(t, ent)

	assert.True(t, set.Lookup("charge").Op.RedactIdentity, "a whole-arguments identity holds the card: digest it")
	_, id, _ = set.Lookup("tag").Values(json.RawMessage(`{"a":"x","b":"y"}`))
	assert.Equal(t, []any{"x/y"}, id)
	assert.Equal(t, "tagIt", set.Lookup("tag").Op.Name)

	_, id, ent = set.Lookup("get_payment").Values(json.RawMessage(`{"payment_id":"p1"}`))
	assert.Nil(t, id, "reads have no identity")
	assert.Equal(t, []any{"p1"}, ent)

	args, id, _ = refund.Values(json.RawMessage(`[1,2]`))
	assert.Equal(t, []any{[]any{1.0, 2.0}}, args, "non-object arguments are recorded as they came")
	assert.Equal(t, args, id)
}

func TestZeroSpecPanics(t *testing.T) {
	assert.PanicsWithValue(t, `toolspec: mcp tool "x" has a zero Spec: build it with Read or Write`, func() {
		Compile(Tools{"x": {}}, "mcp")
	})
}
