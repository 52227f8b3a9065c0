package toolspec

import (
	"encoding/json"
	"slices"
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

func TestIdempotentAndHints(t *testing.T) {
	set := Compile(Tools{
		"set_status": Write(Identity("order_id"), Idempotent()),
		"add_note":   Write(Identity("order_id")),
		"get_order":  Read(Entity("order_id"), Idempotent()), // meaningless on a read
	}, "mcp")
	assert.True(t, set.Lookup("set_status").Op.Idempotent)
	assert.False(t, set.Lookup("add_note").Op.Idempotent)
	assert.False(t, set.Lookup("get_order").Op.Idempotent)

	hints := func(h Hints) func() (Hints, bool) { return func() (Hints, bool) { return h, true } }
	none := func() (Hints, bool) { return Hints{}, false }

	// No Spec and no hints: not traced.
	assert.Nil(t, set.LookupHinted("unknown", none))
	// No Spec, hints: the hints decide.
	ro := set.LookupHinted("list_todos", hints(Hints{ReadOnly: true}))
	require.NotNil(t, ro)
	assert.Equal(t, runtime.KindRead, ro.Op.Kind)
	up := set.LookupHinted("update_todo", hints(Hints{Idempotent: true}))
	require.NotNil(t, up)
	assert.Equal(t, runtime.KindWrite, up.Op.Kind)
	assert.True(t, up.Op.Idempotent)
	assert.Equal(t, "update_todo", up.Op.Name)
	assert.Same(t, up, set.LookupHinted("update_todo", hints(Hints{Idempotent: true})), "compiled once")
	_, id, _ := up.Values([]byte(`{"b":1,"a":"x"}`))
	assert.Equal(t, []any{map[string]any{"a": "x", "b": float64(1)}}, id, "the whole arguments are the identity")
	// Default hints (not read-only, not idempotent) say nothing of a
	// write's identity: without a Spec the tool is not traced.
	assert.Nil(t, set.LookupHinted("add_todo", hints(Hints{})))

	// A Spec stands; the hints add Idempotent to a write.
	note := set.LookupHinted("add_note", hints(Hints{Idempotent: true, ReadOnly: true}))
	assert.Equal(t, runtime.KindWrite, note.Op.Kind)
	assert.True(t, note.Op.Idempotent)
	_, id, _ = note.Values([]byte(`{"order_id":"o1","text":"x"}`))
	assert.Equal(t, []any{"o1"}, id)
	// Without hints, the plain Spec.
	assert.Same(t, set.Lookup("add_note"), set.LookupHinted("add_note", none))
}

// Two 64-bit ids that differ beyond float64 precision are two identities.
func TestBigIntegerIdentities(t *testing.T) {
	tool := Compile(Tools{"refund": Write(Identity("order_id"))}, "test").Lookup("refund")
	_, a, _ := tool.Values(json.RawMessage(`{"order_id":1234567890123456788}`))
	_, b, _ := tool.Values(json.RawMessage(`{"order_id":1234567890123456789}`))
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) == string(jb) {
		t.Fatalf("two ids share the identity %s", ja)
	}
	if string(jb) != "[1234567890123456789]" {
		t.Errorf("identity = %s, want [1234567890123456789]", jb)
	}
	// Ordinary numbers still decode as encoding/json decodes them.
	_, c, _ := tool.Values(json.RawMessage(`{"order_id":42}`))
	if _, ok := c[0].(float64); !ok {
		t.Errorf("order_id 42 decoded as %T, want float64", c[0])
	}
}

func TestValuesOfNamesMissingIdentityArguments(t *testing.T) {
	set := Compile(Tools{"send": Write(Identity("message_id", "to"))}, "test")
	tool := set.Lookup("send")
	for _, c := range []struct {
		raw     string
		missing []string
	}{
		{`{"message_id":"m1","to":"+49"}`, nil},
		{`{"to":"+49","body":"hi"}`, []string{"message_id"}},
		{`{"message_id":null}`, []string{"message_id", "to"}},
	} {
		_, _, _, missing := tool.ValuesOf(json.RawMessage(c.raw))
		if !slices.Equal(missing, c.missing) {
			t.Errorf("%s: missing %v, want %v", c.raw, missing, c.missing)
		}
	}
}
