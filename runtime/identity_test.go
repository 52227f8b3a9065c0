package runtime

import (
	"encoding/json"
	"strings"
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

// TestSameWork: a retry under a fresh key re-sends some of the request;
// other work shares at most the values every request has by default.
func TestSameWork(t *testing.T) {
	op := func(names []string, values ...any) *Operation {
		return &Operation{Args: Args{Names: names, Values: values}}
	}
	post := []string{"channel", "text", "opts"}
	keyed := func(id string, o *Operation) *Operation { o.Identity = id; return o }
	cases := []struct {
		name string
		a, b *Operation
		want bool
	}{
		{"fresh key, same amount", op([]string{"key", "amount"}, "k-1", 42), op([]string{"key", "amount"}, "k-2", 42), true},
		{"fresh key inside a struct", op([]string{"req"}, map[string]any{"key": "k-1", "order": "o-9"}), op([]string{"req"}, map[string]any{"key": "k-2", "order": "o-9"}), true},
		{"other channel, other text", op(post, "#billing", "refund issued", map[string]any{"unfurl": false, "thread": "", "retries": 0, "tag": nil}),
			op(post, "#oncall", "could not post", map[string]any{"unfurl": false, "thread": "", "retries": 0, "tag": nil}), false},
		{"other channel, same text", op(post, "#billing", "refund issued", nil), op(post, "#oncall", "refund issued", nil), true},
		{"same value under another name", op([]string{"from"}, "acct-1"), op([]string{"to"}, "acct-1"), false},
		{"no arguments recorded", op(nil), op(nil), true},
		{"the key is all that is recorded", keyed(`"ck-1"`, op([]string{"key"}, "ck-1")), keyed(`"ck-2"`, op([]string{"key"}, "ck-2")), true},
		{"the key and a default", keyed(`"ck-1"`, op([]string{"key", "dry"}, "ck-1", false)), keyed(`"ck-2"`, op([]string{"key", "dry"}, "ck-2", false)), true},
		{"the key and other text", keyed(`"billing"`, op(post[:2], "billing", "refund issued")), keyed(`"oncall"`, op(post[:2], "oncall", "could not post")), false},
		{"a whole-object identity", keyed(`{"channel":"billing"}`, op(post[:1], "billing")), keyed(`{"channel":"oncall"}`, op(post[:1], "oncall")), false},
	}
	for _, c := range cases {
		if got := sameWork(c.a, c.b); got != c.want {
			t.Errorf("%s: sameWork = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestAppendJSONStringEveryPosition puts each byte that needs escaping (or
// starts a multi-byte rune) at each position of strings longer than the
// eight bytes plainWord tests at once, and compares with encoding/json.
func TestAppendJSONStringEveryPosition(t *testing.T) {
	specials := []string{"\x00", "\x1f", "\"", "\\", "<", ">", "&", "\x7f", "é", "\u2028", "\xff", "\n"}
	for _, sp := range specials {
		for n := 0; n <= 24; n++ {
			for at := 0; at <= n; at++ {
				s := strings.Repeat("a", at) + sp + strings.Repeat("z", n-at)
				want, err := json.Marshal(s)
				require.NoError(t, err)
				if got := appendJSONString(nil, s); string(got) != string(want) {
					t.Fatalf("appendJSONString(%q) = %s, encoding/json = %s", s, got, want)
				}
			}
		}
	}
	// Bytes just around the limits of the word tests.
	for c := 0; c < 256; c++ {
		s := "abcdefgh" + string([]byte{byte(c)}) + "ijklmnopqrstuvw" + string([]byte{byte(c)})
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json = %s", s, got, want)
		}
	}
}
