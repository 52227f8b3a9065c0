package agentidemanthropic_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	agentidemanthropic "github.com/agentidem/agentidem-go/adapters/anthropic"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/toolrunner"
)

// runScripted runs the SDK's tool runner over tools, wrapped by the
// adapter, against a scripted Messages API, to the model's last answer.
func runScripted(ctx context.Context, script func([]apiMessage) ([]apiBlock, string), tools ...anthropic.BetaTool) error {
	client := anthropic.NewClient(option.WithAPIKey("test-key"), option.WithBaseURL("http://model.test/"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: inProcess{&messagesAPI{script: script}}}))
	runner := client.Beta.Messages.NewToolRunner(agentidemanthropic.Wrap(specs, tools),
		anthropic.BetaToolRunnerParams{
			BetaMessageNewParams: anthropic.BetaMessageNewParams{
				Model: "claude-scripted", MaxTokens: 1024,
				Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Bill acme."))},
			},
			MaxIterations: 10,
			DisableThread: true,
		})
	_, err := runner.RunToCompletion(ctx)
	return err
}

// A model that, when createInvoice fails, asks for it again with the id
// lower-cased: the same invoice, restated. A billing service that keys
// invoices by the id as given files a second one; one that compares ids
// as the business does (upper-cased) files one. The suite only warned
// (identity_unstable) of both, and the second invoice passed 6 runs of 6
// (red team rR #5, a charge through the Anthropic and Eino adapters): with
// State, each call seen changing the world under the same id restated is a
// duplicate_write; the service that compares ids so is safe.
func TestAnIdRestatedInAnotherCaseOnARetry(t *testing.T) {
	for _, normalized := range []bool{true, false} {
		var mu sync.Mutex
		var invoices map[string]string
		create := func(ctx context.Context, in createIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
			mu.Lock()
			defer mu.Unlock()
			id := in.InvoiceID
			if normalized {
				id = strings.ToUpper(id)
			}
			if _, ok := invoices[id]; !ok {
				invoices[id] = in.Customer
			}
			return text(`{"ok":true,"invoice_id":"` + id + `"}`), nil
		}
		restated := apiBlock{Name: "createInvoice", Input: json.RawMessage(`{"invoice_id":"inv-1","customer":"acme"}`)}
		script := retryScript(restated, "Invoice INV-1 is filed.")
		agent := func(ctx context.Context) error {
			tool, err := toolrunner.NewBetaToolFromJSONSchema("createInvoice", "create an invoice", create)
			if err != nil {
				return err
			}
			return runScripted(ctx, script, tool)
		}
		rep := checked(t, testkit.Run(t, agent,
			testkit.Setup(func(context.Context) error { mu.Lock(); invoices = map[string]string{}; mu.Unlock(); return nil }),
			testkit.State(func() any {
				mu.Lock()
				defer mu.Unlock()
				ids := make([]string, 0, len(invoices))
				for id := range invoices {
					ids = append(ids, id)
				}
				return ids
			})))
		caught := hasCode(rep, runtime.CodeDuplicateWrite, "lost_acknowledgement/createInvoice#1")
		switch {
		case normalized && len(rep.Errors()) > 0:
			t.Errorf("the service that compares ids upper-cased filed one invoice: %v", codes(rep))
		case !normalized && !caught:
			t.Errorf("a second invoice for the id restated in lower case, and no duplicate_write: %v", codes(rep))
		}
	}
}
