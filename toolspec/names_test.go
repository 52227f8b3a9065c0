package toolspec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMisspeltKey(t *testing.T) {
	served := []string{"find_booking", "book_room"}
	err := Tools{"find_booking": Read(), "bookRoom": Write()}.Misspelt(served)
	require.Error(t, err)
	assert.Equal(t, `Tools key "bookRoom" names no tool (did you mean "book_room"?): a tool that no key names is not traced, never faulted, and the suite cannot see it`, err.Error())

	err = Tools{"refnd": Write(), "get_paymnt": Read(), "zzz": Read()}.Misspelt([]string{"refund", "get_payment"})
	require.Error(t, err)
	assert.Equal(t, `Tools key "get_paymnt" names no tool (did you mean "get_payment"?); "refnd" names no tool (did you mean "refund"?): a tool that no key names is not traced, never faulted, and the suite cannot see it`, err.Error())

	for _, ok := range []struct {
		tools  Tools
		served []string
	}{
		{Tools{"find_booking": Read(), "book_room": Write()}, served},
		// A tool without a key is not traced, as documented.
		{Tools{"find_booking": Read()}, served},
		// One map for several agents: a key for a tool this one does not serve.
		{Tools{"find_booking": Read(), "book_room": Write(), "cancel_order": Write()}, served},
		{Tools{"attachInvoice": Write(), "createInvoice": Write()}, []string{"createInvoice", "other"}},
		// The near tool has a key of its own: the other key is another tool's.
		{Tools{"book_room": Write(), "book_rooms": Write()}, served},
		{Tools{"x": Read()}, nil},
	} {
		assert.NoError(t, ok.tools.Misspelt(ok.served), "%v %v", ok.tools, ok.served)
	}
}

func TestNearest(t *testing.T) {
	names := []string{"book_room", "find_booking", "cancel_booking"}
	for key, want := range map[string]string{
		"bookRoom":       "book_room",
		"Book-Room":      "book_room",
		"book_rooms":     "book_room",
		"find_bookings":  "find_booking",
		"cancel_bookin":  "cancel_booking",
		"refund":         "",
		"room":           "",
		"cancel_booking": "cancel_booking",
	} {
		assert.Equal(t, want, Nearest(key, names), key)
	}
}
