package toolspec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecretNumbersKeepTheirDigits: Secrets keeps a number as the
// json.Number of its literal; decoded into a float64, 12345678901234567891
// was searched for as 12345678901234567000 and leaked (red team R1).
func TestSecretNumbersKeepTheirDigits(t *testing.T) {
	tool := Compile(Tools{"charge": Write(Identity("order_id"), Redact("account", "pin"))}, "test").Lookup("charge")
	got := tool.Secrets(json.RawMessage(`{"order_id":"o-1","account":12345678901234567891,"pin":"0042"}`))
	assert.Equal(t, []any{json.Number("12345678901234567891"), "0042"}, got)
	assert.Nil(t, tool.Secrets(json.RawMessage(`{"order_id":"o-1"} trailing`)))
}

// TestBigNumberSecretIsBlanked: a redacted argument sent as a JSON number,
// which the tool echoes in its result and its error text under the forms
// tools write numbers in, shows up in no rendering of the report. A number
// of 2^53 or more leaked before (red team R1: "charged account
// 12345678901234567891" in the JSON report), and so did any number that a
// tool decoded into a float64 and printed with %v (4.111111111111111e+15).
func TestBigNumberSecretIsBlanked(t *testing.T) {
	tool := Compile(Tools{"charge": Write(Identity("order_id"), Redact("account"))}, "test").Lookup("charge")
	cases := []struct {
		name, sent, echo string // echo: the account as the tool writes it
	}{
		{"big integer", `12345678901234567891`, "12345678901234567891"},
		{"2^53+1", `9007199254740993`, "9007199254740993"},
		{"exponent, echoed exactly", `1.2345678901234567891e19`, "12345678901234567891"},
		{"exponent, echoed as sent", `1.2345678901234567891e19`, "1.2345678901234567891e19"},
		{"big, echoed from a float64 with %v", `12345678901234567891`, "1.2345678901234567e+19"},
		{"big, echoed from a float64 by encoding/json", `12345678901234567891`, "12345678901234567000"},
		{"small, echoed from a float64 with %v", `4111111111111111`, "4.111111111111111e+15"},
		{"sent as a string", `"12345678901234567891"`, "12345678901234567891"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := json.RawMessage(`{"order_id":"o-1","account":` + c.sent + `}`)
			call := func(ctx context.Context, fail bool) error {
				args, id, ent := tool.Values(raw)
				aiCall, _ := runtime.Begin(ctx, tool.Op, args, id, ent)
				aiCall.Redact(tool.Secrets(raw)...)
				if err := aiCall.Start(); err != nil {
					return err
				}
				var err error
				if fail {
					err = errors.New("account " + c.echo + " declined")
				}
				return aiCall.Finish(err, "charged account "+c.echo+" for o-1")
			}
			rep, err := runtime.Run(context.Background(), "charge", func(ctx context.Context) error {
				if err := call(ctx, false); err != nil {
					return err
				}
				return call(ctx, true)
			})
			require.NoError(t, err)
			var js, html bytes.Buffer
			require.NoError(t, rep.WriteJSON(&js))
			require.NoError(t, render.HTML(&html, rep))
			for name, out := range map[string]string{"json": js.String(), "text": render.Text(rep), "html": html.String()} {
				if i := strings.Index(out, c.echo); i >= 0 {
					t.Errorf("%s report holds the redacted account %s: ...%s...", name, c.echo, out[max(0, i-80):min(len(out), i+40)])
				}
			}
			assert.Contains(t, js.String(), `charged account [redacted] for o-1`)
			assert.Contains(t, js.String(), `account [redacted] declined`)
		})
	}
}
