package runtime

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// pgText is a moment as PostgreSQL writes a timestamptz as text
// (clock_timestamp()::text, the session in UTC).
func pgText(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05.999999") + "+00"
}

// compactMS is a moment as to_char(t, 'YYYYMMDD-HH24MISS-MS') writes it.
func compactMS(t time.Time) string {
	return fmt.Sprintf("%s-%03d", t.UTC().Format("20060102-150405"), t.Nanosecond()/1e6)
}

// Moments inside a string and in compact forms are left out where they lie
// within the suite's window, and only the moment: the rest of the string
// stays. Digits that only look like a date and a time (an order number, a
// version, a moment far from now) are data.
func TestMomentsInsideStrings(t *testing.T) {
	now := time.Now()
	for in, want := range map[string]string{
		"subscribed at " + pgText(now):                            "subscribed at \x00clock",
		"RCPT-" + compactMS(now):                                  "RCPT-\x00clock",
		"RCPT-" + compactMS(now) + "-B":                           "RCPT-\x00clock-B",
		"export_" + now.UTC().Format("20060102T150405Z") + ".csv": "export_\x00clock.csv",
		"batch " + now.UTC().Format("20060102150405") + " done":   "batch \x00clock done",
		"at " + now.UTC().Format(time.RFC3339Nano) + " by acme":   "at \x00clock by acme",
		"at " + now.Format("2006-01-02 15:04:05") + " local":      "at \x00clock local",
		pgText(now): "\x00clock",
		pgText(now) + " / " + pgText(now.Add(time.Millisecond)):         "\x00clock / \x00clock",
		"ORD-" + now.Add(-30*time.Hour).UTC().Format("20060102-150405"): "", // no zone reaches it
		"ORD-" + now.UTC().Format("20060102") + "-0001":                 "",
		"ORD-1234567":                            "",
		"order 20261205195822123":                "",
		"v" + now.UTC().Format("20060102150405"): "", // glued to a letter
		"due 2031-01-01 10:00:00":                "", // a date a call set, far from now
		"created 20200101-101010-123":            "",
		"qty 2, sku 12345678-123456":             "",
	} {
		got := withoutMoments(encode(in))
		if want == "" {
			want = in
		}
		assert.Equal(t, encode(want), got, in)
		assert.Equal(t, encode(want), withoutClocks(encode(in), nil), in)
	}
	// A moment a call was given stays.
	m := pgText(now)
	assert.Equal(t, encode("due "+m), withoutClocks(encode("due "+m), map[string]bool{m: true}))
	assert.True(t, holdsClock(encode("RCPT-"+compactMS(now))))
	assert.False(t, holdsClock(encode("ORD-"+now.Add(-30*time.Hour).UTC().Format("20060102-150405")+" ORD-1234567")))
}

// subscribe is a create-if-absent (INSERT ... ON CONFLICT (email) DO
// NOTHING) whose row holds a note with the moment it was made inside it,
// and a receipt ref with the moment in a compact form (red team, /tmp/rtM
// P1, TestSubscribeNote and TestReceiptRef on PostgreSQL: a duplicate_write
// in duplicate_delivery/concurrent, 10 runs of 10 each). Naive, it inserts
// again; reissuing, it sets the ref anew with a letter for each issue (A,
// then B), which is a change beside the moment.
func subscribeAgent(w *kvWorld, mode string) func(context.Context) error {
	sub := &Op{Name: "subscribe", Kind: KindWrite, Params: []string{"email"}}
	meet := &rendezvous{timeout: 10 * time.Millisecond} // two deliveries at once overlap, as on a database
	return func(ctx context.Context) error {
		call := func() error {
			return traced(ctx, sub, []any{"a@x"}, []any{"a@x"}, func(context.Context) error {
				meet.wait()
				now := time.Now()
				return w.do(func(m map[string]any) {
					l, _ := m["subs"].([]any)
					i := slices.IndexFunc(l, func(r any) bool { return r.(map[string]any)["email"] == "a@x" })
					switch {
					case i < 0 || mode == "naive":
						m["subs"] = append(l, map[string]any{"email": "a@x", "note": "subscribed at " + pgText(now), "ref": "RCPT-" + compactMS(now) + "-A", "issues": 1.0})
					case mode == "reissue":
						r := l[i].(map[string]any)
						r["issues"] = r["issues"].(float64) + 1
						r["ref"] = "RCPT-" + compactMS(now) + "-" + string(rune('A'+int(r["issues"].(float64))-1))
					}
				})
			})
		}
		if err := call(); err != nil && ctx.Err() == nil {
			return call()
		}
		return nil
	}
}

func TestCreateIfAbsentWithMomentsInsideItsTextIsNoDuplicate(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"if absent", nil},
		{"naive", []string{ScenarioCrashRestart + "/subscribe#1", ScenarioDuplicateConcurrent, ScenarioDuplicateSeq, ScenarioLostAck + "/subscribe#1"}},
		{"reissue", []string{ScenarioCrashRestart + "/subscribe#1", ScenarioDuplicateConcurrent, ScenarioDuplicateSeq, ScenarioLostAck + "/subscribe#1"}},
	} {
		w := &kvWorld{}
		rep := runOn(t, w, nil, subscribeAgent(w, tc.mode))
		if got := dupScenarios(rep); !slices.Equal(got, tc.want) {
			t.Errorf("%s: duplicate_write in %v, want %v; findings %v", tc.mode, got, tc.want, findings(rep, ""))
			for _, f := range rep.Findings {
				t.Logf("%s: %s", f.Scenario, f.Message)
			}
		}
	}
}
