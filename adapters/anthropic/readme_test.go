package agentidemanthropic_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	agentidemanthropic "github.com/agentidem/agentidem-go/adapters/anthropic"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/toolrunner"
)

// invoices creates invoices by the id the caller chooses: a repeat is a
// replay, and says so to the trace.
type invoices struct {
	mu  sync.Mutex
	ids map[string]bool
}

type invoiceIn struct {
	ID string `json:"invoice_id" jsonschema:"required"`
}

func (s *invoices) create(ctx context.Context, in invoiceIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids[in.ID] {
		runtime.MarkReplayed(ctx)
	}
	s.ids[in.ID] = true
	return anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: "created " + in.ID}}, nil
}

// scriptedModel answers POST /v1/messages instead of Claude: one tool call,
// then, once the conversation holds its result, the answer.
func scriptedModel(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	if bytes.Contains(body, []byte(`"tool_result"`)) {
		io.WriteString(w, `{"id":"msg_2","type":"message","role":"assistant","model":"scripted",
			"content":[{"type":"text","text":"Invoice INV-1 is created."}],"stop_reason":"end_turn"}`)
		return
	}
	io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"scripted",
		"content":[{"type":"tool_use","id":"toolu_1","name":"createInvoice","input":{"invoice_id":"INV-1"}}],
		"stop_reason":"tool_use"}`)
}

// local serves the client's requests with a handler, in process.
type local http.HandlerFunc

func (h local) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	h(rec, r)
	return rec.Result(), nil
}

func TestInvoiceAgent(t *testing.T) {
	var store *invoices
	agent := func(ctx context.Context) error {
		create, err := toolrunner.NewBetaToolFromJSONSchema("createInvoice", "create an invoice", store.create)
		if err != nil {
			return err
		}
		specs := agentidemanthropic.Tools{
			"createInvoice": agentidemanthropic.Write(agentidemanthropic.Identity("invoice_id")),
		}
		client := anthropic.NewClient(option.WithAPIKey("test"),
			option.WithHTTPClient(&http.Client{Transport: local(scriptedModel)}))
		runner := client.Beta.Messages.NewToolRunner(agentidemanthropic.Wrap(specs, []anthropic.BetaTool{create}),
			anthropic.BetaToolRunnerParams{
				BetaMessageNewParams: anthropic.BetaMessageNewParams{
					Model:     anthropic.ModelClaudeSonnet4_6,
					MaxTokens: 1024,
					Messages: []anthropic.BetaMessageParam{
						anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Invoice order ORD-9.")),
					},
				},
				DisableThread: true,
			})
		_, err = runner.RunToCompletion(ctx)
		return err
	}
	testkit.TestAgent(t, agent, testkit.Setup(func(context.Context) error {
		store = &invoices{ids: map[string]bool{}}
		return nil
	}))
}
