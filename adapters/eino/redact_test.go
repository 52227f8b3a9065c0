package agentidemeino_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	agentidemeino "github.com/agentidem/agentidem-go/adapters/eino"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/cloudwego/eino/compose"
)

// TestBigNumberSecretIsBlanked: a redacted argument that the model sends as
// a JSON number of 2^53 or more, and that the tool echoes in its JSON
// answer and in its error, shows up nowhere in the report; it was searched
// for as its float64 (12345678901234567000) and leaked whole (red team R1,
// found over MCP; Eino shares toolspec's Secrets).
func TestBigNumberSecretIsBlanked(t *testing.T) {
	const card = "12345678901234567891"
	ep := agentidemeino.Middleware(specs).Invokable(func(_ context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
		if strings.Contains(in.Arguments, `"o-8"`) {
			return nil, errors.New("card " + card + " declined")
		}
		return &compose.ToolOutput{Result: `{"paid":true,"card":` + card + `}`}, nil
	})
	rep, err := runtime.Run(context.Background(), "pay", func(ctx context.Context) error {
		if _, err := ep(ctx, &compose.ToolInput{Name: "pay", Arguments: `{"order":"o-7","card":` + card + `}`, CallID: "c1"}); err != nil {
			return err
		}
		_, err := ep(ctx, &compose.ToolInput{Name: "pay", Arguments: `{"order":"o-8","card":` + card + `}`, CallID: "c2"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), card); n > 0 {
		t.Errorf("the redacted card is in the report %d times", n)
	}
	for _, want := range []string{`"card":"[redacted]","paid":true`, `card [redacted] declined`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the report lacks %s: the answer lost its shape or was not recorded", want)
		}
	}
}
