package agentidemmcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/runtime"
)

// TestRedactedArgumentNeverReachesTheReport: a redacted MCP argument that
// the tool echoes in its result and its error is blanked in the report, as
// for generated wrappers (issue 12.8).
func TestRedactedArgumentNeverReachesTheReport(t *testing.T) {
	const card = "4242424242424242"
	rep, err := runtime.Run(context.Background(), "charge", func(ctx context.Context) error {
		echo := func(context.Context) (string, error) { return "charged card " + card, nil }
		if _, err := agentidemmcp.Call(ctx, reg, "charge", json.RawMessage(`{"card":"`+card+`","amount":3}`), echo, nil); err != nil {
			return err
		}
		fail := func(context.Context) (string, error) { return "", errors.New("card " + card + " declined") }
		_, err := agentidemmcp.Call(ctx, reg, "charge", json.RawMessage(`{"card":"`+card+`","amount":900}`), fail, nil)
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
		t.Fatalf("the redacted card is in the report %d times", n)
	}
	if !strings.Contains(buf.String(), "card [redacted] declined") {
		t.Errorf("the error text lost its shape or was not recorded")
	}
}

// TestBigNumberArgumentNeverReachesTheReport: a redacted argument sent as a
// JSON number of 2^53 or more, which the tool echoes, is blanked: it was
// searched for as its float64 (12345678901234567000) and leaked whole (red
// team R1).
func TestBigNumberArgumentNeverReachesTheReport(t *testing.T) {
	for _, card := range []string{"12345678901234567891", "9007199254740993"} {
		rep, err := runtime.Run(context.Background(), "charge", func(ctx context.Context) error {
			echo := func(context.Context) (string, error) { return "charged card " + card, nil }
			_, err := agentidemmcp.Call(ctx, reg, "charge", json.RawMessage(`{"card":`+card+`,"amount":3}`), echo,
				func(s string) (any, error) { return s, nil })
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
			t.Errorf("the redacted card %s is in the report %d times", card, n)
		}
		if !strings.Contains(buf.String(), "charged card [redacted]") {
			t.Errorf("the result lost its shape or was not recorded")
		}
	}
}
