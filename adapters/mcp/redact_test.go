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
