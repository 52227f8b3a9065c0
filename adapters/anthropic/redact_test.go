package agentidemanthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	agentidemanthropic "github.com/agentidem/agentidem-go/adapters/anthropic"
	"github.com/agentidem/agentidem-go/runtime"
	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/toolrunner"
)

type chargeIn struct {
	OrderID string      `json:"order_id"`
	Account json.Number `json:"account"`
}

// TestBigNumberSecretIsBlanked: a redacted argument that the model sends as
// a JSON number of 2^53 or more, echoed in the tool's answer, shows up
// nowhere in the report; it was searched for as its float64
// (12345678901234567000) and leaked whole (red team R1, found over MCP;
// this adapter shares toolspec's Secrets).
func TestBigNumberSecretIsBlanked(t *testing.T) {
	const account = "12345678901234567891"
	charge, err := toolrunner.NewBetaToolFromJSONSchema("charge", "charge an account",
		func(_ context.Context, in chargeIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
			return text("charged account " + in.Account.String() + " for " + in.OrderID), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	tools := agentidemanthropic.Wrap(agentidemanthropic.Tools{
		"charge": agentidemanthropic.Write(agentidemanthropic.Identity("order_id"), agentidemanthropic.Redact("account")),
	}, []anthropic.BetaTool{charge})
	rep, err := runtime.Run(context.Background(), "charge", func(ctx context.Context) error {
		_, err := tools[0].Execute(ctx, json.RawMessage(`{"order_id":"o-1","account":`+account+`}`))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), account); n > 0 {
		t.Errorf("the redacted account is in the report %d times", n)
	}
	if !strings.Contains(buf.String(), "charged account [redacted] for o-1") {
		t.Errorf("the answer lost its shape or was not recorded")
	}
}
