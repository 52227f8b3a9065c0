package gosdk_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ledger moves money once per refund call unless the caller sends an
// idempotency key.
type ledger struct {
	mu      sync.Mutex
	refunds map[string]int
	keys    *idem.Store
}

func (b *ledger) refund(id string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refunds[id]++
	return "refunded " + id, nil
}

type refundIn struct {
	PaymentID string `json:"payment_id"`
	Key       string `json:"key,omitempty"`
}

// newServer serves the ledger's refund tool over MCP.
func newServer(b **ledger) *mcp.Server {
	tools := agentidemmcp.Tools{
		"refund": agentidemmcp.Write(agentidemmcp.Identity("payment_id")),
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "bank", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "refund", Description: "refund a payment"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in refundIn) (*mcp.CallToolResult, any, error) {
			refund := func(context.Context) (string, error) { return (*b).refund(in.PaymentID) }
			var out string
			var err error
			if in.Key != "" {
				out, _, err = idem.Do(ctx, (*b).keys, in.Key, in.PaymentID, refund)
			} else {
				out, err = refund(ctx)
			}
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil, nil
		})
	s.AddReceivingMiddleware(gosdk.Middleware(tools))
	return s
}

// refundAgent connects to the server, refunds two payments in parallel and
// retries a call that timed out, with an idempotency key derived from the
// work. It connects per invocation, so that the session's goroutines are
// the invocation's own and the schedule explorer sees every call.
func refundAgent(s *mcp.Server) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := s.Connect(context.WithoutCancel(ctx), st, nil)
		if err != nil {
			return err
		}
		defer ss.Wait()
		c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
		c.AddSendingMiddleware(gosdk.Propagate())
		cs, err := c.Connect(context.WithoutCancel(ctx), ct, nil)
		if err != nil {
			ss.Close()
			return err
		}
		defer cs.Close()

		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, id := range []string{"pay-1", "pay-2"} {
			wg.Go(func() {
				args := map[string]any{"payment_id": id, "key": idem.Key("refund", id)}
				for range 3 {
					_, errs[i] = cs.CallTool(ctx, &mcp.CallToolParams{Name: "refund", Arguments: args})
					if errs[i] == nil || !strings.Contains(errs[i].Error(), "timeout") {
						return
					}
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
}

func TestRefundAgent(t *testing.T) {
	var b *ledger
	testkit.TestAgent(t, refundAgent(newServer(&b)), testkit.Setup(func(context.Context) error {
		b = &ledger{refunds: map[string]int{}, keys: idem.NewMemory()}
		return nil
	}))
}
