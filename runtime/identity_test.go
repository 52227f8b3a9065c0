package runtime

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonical(t *testing.T) {
	type key struct {
		Session string `json:"session"`
		Intent  string `json:"intent"`
	}
	cases := []struct {
		in   []any
		want string
	}{
		{[]any{"payment-123"}, `"payment-123"`},
		{[]any{42}, `42`},
		{[]any{"a", 1, true}, `["a",1,true]`},
		{[]any{map[string]int{"b": 2, "a": 1}}, `{"a":1,"b":2}`},
		{[]any{key{"s1", "refund"}}, `{"session":"s1","intent":"refund"}`},
		{[]any{[]string{"x", "y"}}, `["x","y"]`},
		{[]any{nil}, `null`},
		{[]any{}, `[]`},
	}
	for _, c := range cases {
		got, err := Canonical(c.in...)
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}
}

func TestCanonicalRejectsFuncs(t *testing.T) {
	_, err := Canonical(func() {})
	assert.ErrorContains(t, err, "identity value of type func() cannot be canonicalized")
}

// FuzzCanonicalString proves the fast string path writes what encoding/json
// writes, so an identity does not depend on which path produced it.
func FuzzCanonicalString(f *testing.F) {
	for _, s := range []string{"", "abc", "<a&b>", "\x00\x1f\"\\", "\u2028\u2029", "\xff\xfe", "héllo"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Canonical(s)
		require.NoError(t, err)
		want, err := json.Marshal(s)
		require.NoError(t, err)
		if got != string(want) {
			t.Fatalf("Canonical(%q) = %s, encoding/json = %s", s, got, want)
		}
	})
}
