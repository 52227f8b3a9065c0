package idem_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/idem"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestKeyIsSHA256OfCanonicalJSON(t *testing.T) {
	for _, c := range []struct {
		parts []any
		json  string
	}{
		{[]any{"refund", "order-1"}, `["refund","order-1"]`},
		{[]any{"refund"}, `"refund"`},
		{[]any{}, `[]`},
		{[]any{"ticket", map[string]any{"b": 2, "a": []int{1}}}, `["ticket",{"a":[1],"b":2}]`},
		{[]any{"x", 42, true, nil}, `["x",42,true,null]`},
	} {
		if got, want := idem.Key(c.parts...), sha(c.json); got != want {
			t.Errorf("Key(%#v) = %s, want sha256(%s) = %s", c.parts, got, c.json, want)
		}
	}
}

func TestKeyDeterministicAndDistinct(t *testing.T) {
	a := idem.Key("refund", map[string]int{"x": 1, "y": 2})
	b := idem.Key("refund", map[string]int{"y": 2, "x": 1})
	if a != b {
		t.Fatalf("equal maps gave different keys %s and %s", a, b)
	}
	if idem.Key("refund", "o1") == idem.Key("refund", "o2") || idem.Key("refund", "o1") == idem.Key("charge", "o1") {
		t.Fatal("different identities gave the same key")
	}
	// Grouping matters: ("a","b") is not ("ab") nor (["a","b"]) hashed as one part.
	if idem.Key("a", "b") == idem.Key("ab") {
		t.Fatal(`Key("a","b") == Key("ab")`)
	}
}

func TestKeyPanicsOnMisuse(t *testing.T) {
	defer func() {
		r := recover()
		msg, _ := r.(string)
		if !strings.HasPrefix(msg, "idem: ") {
			t.Fatalf("recover() = %#v, want a panic message starting with \"idem: \"", r)
		}
	}()
	idem.Key("refund", func() {})
	t.Fatal("Key with a func part did not panic")
}

func TestKeyOfReturnsError(t *testing.T) {
	if _, err := idem.KeyOf(make(chan int)); err == nil || !strings.HasPrefix(err.Error(), "idem: ") {
		t.Fatalf("KeyOf(chan) error = %v, want an idem: error", err)
	}
	k, err := idem.KeyOf("refund", "o1")
	if err != nil || k != idem.Key("refund", "o1") {
		t.Fatalf("KeyOf = %q, %v; want Key's value", k, err)
	}
}

func TestFingerprintRejectsUnencodableParams(t *testing.T) {
	s := idem.NewMemory()
	_, _, err := s.Do(t.Context(), "k", func() {}, nil)
	if err == nil || !strings.Contains(err.Error(), "params") {
		t.Fatalf("Do with func params: %v; want a params error", err)
	}
	if _, _, err := s.Do(t.Context(), "", nil, nil); err == nil {
		t.Fatal("Do with an empty key did not fail")
	}
}
