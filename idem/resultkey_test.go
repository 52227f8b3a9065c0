package idem_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/idem"
)

// receipt encodes to JSON but does not decode from it: its Err field is an
// interface.
type receipt struct {
	ID  string
	Err error
}

// The first caller of a result type that does not decode from its own
// JSON gets what fn returned: fn ran and its effect is done. Before, it got
// the zero value and a decoding error, its receipt lost, and every replay
// the same error (a red team's). The replays still cannot decode it, and
// say why; fn runs once.
func TestAResultThatDoesNotDecodeReachesItsFirstCaller(t *testing.T) {
	s := idem.New(idem.NewMemoryBackend())
	runs := 0
	refund := func(context.Context) (receipt, error) {
		runs++
		return receipt{ID: "r1", Err: errors.New("warn")}, nil
	}
	ctx := context.Background()
	r, replayed, err := idem.Do(ctx, s, "refund-1", nil, refund)
	if err != nil || replayed || r.ID != "r1" {
		t.Fatalf("first call = %+v, replayed %v, %v; want fn's receipt r1, not replayed, no error", r, replayed, err)
	}
	_, replayed, err = idem.Do(ctx, s, "refund-1", nil, refund)
	if !replayed || err == nil || !strings.Contains(err.Error(), "cannot be replayed") {
		t.Fatalf("replay: replayed %v, %v; want replayed with an error that says the type cannot be replayed", replayed, err)
	}
	if runs != 1 {
		t.Fatalf("fn ran %d times, want once", runs)
	}
}

// Two binary ids written as strings (string(idBytes)) that are not valid
// UTF-8 gave one key, JSON writing each invalid byte as U+FFFD, and one
// order's refund was answered with another's (a red team's). KeyOf says
// so, Key panics; bytes as []byte, hex or base64 are keys as before.
func TestKeysOfStringsThatAreNotUTF8AreRefused(t *testing.T) {
	a, b := string([]byte{0x01, 0x9a, 0xff}), string([]byte{0x01, 0xfe, 0x80})
	for _, parts := range [][]any{
		{"refund", a},
		{"refund", []string{"x", b}},
		{map[string]any{"order": a}},
		{struct{ Order string }{b}},
	} {
		if _, err := idem.KeyOf(parts...); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("KeyOf(%q) = %v; want an error about invalid UTF-8", parts, err)
		}
	}
	func() {
		defer func() {
			if v := recover(); v == nil || !strings.Contains(v.(string), "not valid UTF-8") {
				t.Errorf("Key of an invalid UTF-8 string: panic %v; want one about invalid UTF-8", v)
			}
		}()
		idem.Key("refund", a)
	}()
	ha, herr1 := idem.KeyOf("refund", hexID(a))
	hb, herr2 := idem.KeyOf("refund", hexID(b))
	if herr1 != nil || herr2 != nil || ha == hb {
		t.Errorf("KeyOf of ids that write their own JSON (hex) = %q, %v and %q, %v; want two keys", ha, herr1, hb, herr2)
	}
	ka, err1 := idem.KeyOf("refund", []byte(a))
	kb, err2 := idem.KeyOf("refund", []byte(b))
	if err1 != nil || err2 != nil || ka == kb {
		t.Errorf("KeyOf of the ids as bytes = %q, %v and %q, %v; want two keys", ka, err1, kb, err2)
	}
}

// hexID is a binary id that writes itself as hex: its JSON tells ids apart.
type hexID string

func (h hexID) MarshalJSON() ([]byte, error) { return json.Marshal(hex.EncodeToString([]byte(h))) }
